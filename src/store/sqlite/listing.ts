import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { verifiedColumns } from '../document-check.ts';
import { inBatches, ListingSql } from '../listing-sql.ts';
import type { Query } from '../listing-sql.ts';
import type { Listing as ListingParts } from '../listing.ts';
import type { FacetCount } from '../facets.ts';
import { matchExpression } from '../search-query.ts';
import type { SearchQuery } from '../search-query.ts';
import type { Candidate } from '../search-ranking.ts';
import { queryWords } from '../search-text.ts';
import type { SearchWords } from '../store.ts';
import type { Fragments } from '../packed-documents.ts';

/** A listing with SQLite's parameter types (see listing.ts). */
export type Listing = ListingParts<SQLInputValue>;

/** Items fetched per step when a whole list is streamed. */
const BATCH = 256;

/** An FTS5 query for items holding every word (words from search-text.ts hold only letters and digits). */
const fullTextQuery = (search: SearchWords): string => queryWords(search).map((word) => `"${word.token}"`).join(' ');

/** An FTS5 query for the organizations a query matches (tokens hold only letters and digits). */
export const organizationTextQuery = (query: SearchQuery): string =>
  matchExpression(query, { token: (token) => `"${token}"`, and: ' AND ', or: ' OR ', andNot: ' NOT ' });

/**
 * A search of `textTable` (an FTS5 table of search-text words, whose rowids are the listed positions),
 * aliased `x`: the condition, and the ranking that puts items whose title holds every word first.
 * Unlike bm25, which reads the whole index entry of each word to weigh it, the ranking reads no more
 * than the search.
 */
export const textSearch = (textTable: string, search: SearchWords) => {
  const query = fullTextQuery(search);
  return {
    words: queryWords(search).map((word) => word.token),
    where: `x.${textTable} MATCH ?`,
    param: query,
    ranking: `x.rowid NOT IN (SELECT rowid FROM ${textTable} WHERE ${textTable} MATCH ?)`,
    rankingParams: [`title : (${query})`],
  };
};

/**
 * A statement whose rows come as arrays of their column values, for the reads every request makes.
 * node:sqlite (Node 24) makes a row object with V8's Object::New, which allocates it straight in the
 * old space, about 72 bytes a row (1,440 bytes a page of 20; none as arrays). Dead as soon as its
 * value is read, such a row still holds that value, a JSON document, through every scavenge (they
 * take old-space objects for live), so each document read was promoted and the rows and documents
 * waited for a mark-compact. An array row is made in the young generation and dies there.
 */
export function prepareRowsAsArrays(db: DatabaseSync, sql: string): StatementSync {
  const statement = db.prepare(sql);
  statement.setReturnArrays(true);
  return statement;
}


/** The SQL of listings and items: a snapshot's tables by their names. */
export const SQL = new ListingSql<SQLInputValue>({
  table: (name) => name,
  asciiLower: (sql) => `lower(${sql})`,
  textParameter: '?',
  textPosition: 'rowid',
  indexedBy: (index) => ` INDEXED BY ${index}`,
  integer: (sql) => sql,
  integerArray: (expression) => `json_group_array(${expression})`,
  anyInteger: (column, count) => `${column} IN (${Array.from({ length: count }, () => '?').join(', ')})`,
  integerParams: (values) => [...values],
  orderedPositions: '(SELECT value AS position, key AS n FROM json_each(?)) p',
  positionsParam: (positions) => JSON.stringify(positions),
  numberedParameters: false,
});

/** Runs listings against one snapshot; prepared statements are reused per SQL text. */
export class ListingRunner {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly arrayStatements = new Map<string, StatementSync>();
  private readonly fragments: Fragments;

  constructor(db: DatabaseSync, fragments: Fragments) {
    this.db = db;
    this.fragments = fragments;
  }

  /** A cached statement: only for calls that finish synchronously (never for an open iterator). */
  statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** A cached statement whose rows are arrays (see prepareRowsAsArrays); the same rules as `statement`. */
  arrayStatement(sql: string): StatementSync {
    let statement = this.arrayStatements.get(sql);
    if (statement === undefined) {
      statement = prepareRowsAsArrays(this.db, sql);
      this.arrayStatements.set(sql, statement);
    }
    return statement;
  }

  /** The verified documents of a query's rows (see verifiedColumns), read from the listing's JSON table. */
  private json({ sql, params }: Query<SQLInputValue>, listing: Listing): string[] {
    return verifiedColumns(this.arrayStatement(sql).all(...params), listing.jsonTable, this.fragments);
  }

  count(listing: Listing): number {
    const { sql, params } = SQL.count(listing);
    return (this.arrayStatement(sql).get(...params) as [number] | undefined)?.[0] ?? 0;
  }

  /** The items at 0-based `offset`, in order (by relevance first when `ranked`), in one statement. */
  items(listing: Listing, offset: number, limit: number, ranked: boolean): string[] {
    return this.json(SQL.page(listing, offset, limit, ranked), listing);
  }

  /** Organizations per value of each facet in a listing, or (no listing) in the unfiltered list, in one reading of the list. */
  facetCounts(listing: Listing | undefined, facets: readonly number[]): FacetCount[] {
    const { sql, params } = SQL.facetCounts(listing, facets);
    return this.statement(sql).all(...params) as unknown as FacetCount[];
  }

  /** The first `limit` matches of an organization search in list order, with what they are ranked by. */
  candidates(listing: Listing, limit: number): Candidate[] {
    const { sql, params } = SQL.candidates(listing, limit);
    return this.statement(sql).all(...params) as unknown as Candidate[];
  }

  /** The JSON of these positions, in the order given. */
  jsonOf(listing: Listing, positions: readonly number[]): string[] {
    return this.json(SQL.jsonOf(listing, positions), listing);
  }

  /** Every item, in order (by relevance first when `ranked`), a batch at a time (see inBatches). */
  all(listing: Listing, ranked: boolean): AsyncGenerator<string[]> {
    return inBatches(SQL, listing, ranked, BATCH, async (page) => this.json(page, listing), async ({ sql, params }) => {
      const rows = this.arrayStatement(sql).all(...params) as unknown as [number, ...unknown[]][];
      return { keys: rows.map((row) => row[0]), json: verifiedColumns(rows, listing.jsonTable, this.fragments, 1) };
    });
  }
}
