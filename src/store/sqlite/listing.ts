import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { Listing as ListingParts } from '../listing.ts';
import type { FacetCount } from '../facets.ts';
import { matchExpression } from '../search-query.ts';
import type { Candidate, SearchQuery } from '../search-query.ts';
import { queryWords } from '../search-text.ts';
import type { SearchWords } from '../store.ts';

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

/** The first column of each row of a statement from prepareRowsAsArrays. */
export const firstColumns = <T>(rows: unknown[]): T[] => (rows as unknown as [T][]).map((row) => row[0]);

/** Runs listings against one snapshot; prepared statements are reused per SQL text. */
export class ListingRunner {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly arrayStatements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.db = db;
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

  private sql(listing: Listing, select: string, tail = ''): string {
    const where = listing.where.length === 0 ? '' : ` WHERE ${listing.where.join(' AND ')}`;
    return `SELECT ${select} FROM ${listing.from}${where}${tail}`;
  }

  count(listing: Listing): number {
    if (listing.length !== undefined) return (this.arrayStatement(listing.length.sql).get(...listing.length.params) as [number] | undefined)?.[0] ?? 0;
    return (this.arrayStatement(this.sql(listing, 'count(*) AS n')).get(...listing.params) as unknown as [number])[0];
  }

  private static params(listing: Listing, ranked: boolean): SQLInputValue[] {
    return ranked && listing.rankingParams !== undefined ? [...listing.params, ...listing.rankingParams] : listing.params;
  }

  private static orderBy(listing: Listing, ranked: boolean): string {
    return ` ORDER BY ${ranked && listing.ranking !== undefined ? `${listing.ranking}, ` : ''}${listing.order}`;
  }

  /** The items at 0-based `offset`, in order (by relevance first when `ranked`). */
  items(listing: Listing, offset: number, limit: number, ranked: boolean): string[] {
    const positions = this.arrayStatement(this.sql(listing, `${listing.position} AS position`, `${ListingRunner.orderBy(listing, ranked)} LIMIT ? OFFSET ?`));
    return firstColumns<number>(positions.all(...ListingRunner.params(listing, ranked), limit, offset)).map((position) => this.jsonAt(listing, position));
  }

  /** Organizations per value of each facet in a listing, or (no listing) in the unfiltered list, in one reading of the list. */
  facetCounts(listing: Listing | undefined, facets: readonly number[]): FacetCount[] {
    const list = facets.map(() => '?').join(', ');
    if (listing === undefined) return this.statement(`SELECT facet, value, organizations AS count FROM facet_counts WHERE facet IN (${list})`).all(...facets) as unknown as FacetCount[];
    const positions = this.sql(listing, `${listing.position} AS position`);
    const sql = `SELECT f.facet, f.value, count(*) AS count FROM (${positions}) p JOIN organization_facets f ON f.position = p.position AND f.facet IN (${list}) GROUP BY f.facet, f.value`;
    return this.statement(sql).all(...listing.params, ...facets) as unknown as FacetCount[];
  }

  /** The first `limit` matches of an organization search in list order, with what they are ranked by. */
  candidates(listing: Listing, limit: number): Candidate[] {
    const { rank, names } = listing.candidates!;
    const sql = this.sql(listing, `${listing.position} AS position, ${rank} AS rank, ${names} AS names`, ` ORDER BY ${listing.order} LIMIT ?`);
    return this.statement(sql).all(...listing.params, limit) as unknown as Candidate[];
  }

  /** The JSON of these positions, in the order given. */
  jsonOf(listing: Listing, positions: readonly number[]): string[] {
    return positions.map((position) => this.jsonAt(listing, position));
  }

  private jsonAt(listing: Listing, position: number): string {
    const row = this.arrayStatement(`SELECT ${listing.jsonColumn} AS json FROM ${listing.jsonTable} WHERE position = ?`).get(position) as unknown as [string];
    return row[0];
  }

  /** Every item, in order (by relevance first when `ranked`), a batch at a time. */
  async *all(listing: Listing, ranked: boolean): AsyncGenerator<string[]> {
    const positions = this.db.prepare(this.sql(listing, `${listing.position} AS position`, ListingRunner.orderBy(listing, ranked)));
    yield* this.batches(positions.iterate(...ListingRunner.params(listing, ranked)) as IterableIterator<{ position: number }>, (row) => this.jsonAt(listing, row.position));
  }

  /** Rows of an iterator over a fresh statement, mapped and grouped into batches. */
  async *batches<Row>(rows: IterableIterator<Row>, toJson: (row: Row) => string): AsyncGenerator<string[]> {
    try {
      let batch: string[] = [];
      for (const row of rows) {
        batch.push(toJson(row));
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      rows.return?.();
    }
  }
}
