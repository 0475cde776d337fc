import type pg from 'pg';
import { query } from './connection.ts';
import { verifiedRows } from '../document-check.ts';
import type { CheckedRow } from '../document-check.ts';
import { inBatches, ListingSql } from '../listing-sql.ts';
import type { Query } from '../listing-sql.ts';
import type { Listing } from '../listing.ts';
import { queryWords } from '../search-text.ts';
import type { FacetCount } from '../facets.ts';
import { matchExpression } from '../search-query.ts';
import type { SearchQuery } from '../search-query.ts';
import type { Candidate } from '../search-ranking.ts';
import type { SearchWords } from '../store.ts';
import type { Fragments } from '../packed-documents.ts';
import { readPostingLists } from './postings.ts';
import type { PostingList } from './postings.ts';

/**
 * A listing (see ../listing.ts); its parameters are written `?` and numbered when the query is made (ListingSql.driverText).
 * `postings`: for an organization search with no other condition, per word the tokens that match
 * it, so that its matches are counted and found from the posting lists (postings.ts).
 */
export type PgListing = Listing<unknown> & { postings?: PostingsClause[] };

/** A clause of a search (see matchClauses) as posting lists: per word the tokens that match it, for the words held and those excluded. */
export interface PostingsClause {
  words: string[][];
  excluded: string[][];
}

/** Items fetched per step when a whole list is streamed. */
const BATCH = 1000;

/** A search of a text table aliased `x`: the condition, and the ranking that puts title matches first. */
export const textSearch = (search: SearchWords) => {
  const words = queryWords(search).map((word) => word.token);
  // Each word a quoted lexeme: words hold only letters and digits, so nothing in them is syntax.
  const tsquery = words.map((word) => `'${word}'`).join(' & ');
  return { words, where: 'x.words @@ ?::tsquery', param: tsquery, ranking: 'NOT (x.title @@ ?::tsquery)', rankingParams: [tsquery] };
};

/** A tsquery for the organizations a query matches (tokens are quoted lexemes, as above). */
export const organizationTsquery = (query: SearchQuery): string => matchExpression(query, { token: (token) => `'${token}'`, and: ' & ', or: ' | ', andNot: ' & !' });

export class PgListingRunner {
  private readonly pool: () => pg.Pool;
  readonly sql: ListingSql<unknown>;
  private readonly fragments: Fragments;

  /** `pool` gives the pool of each query (replicas in turn); `schema`, the generation's; `fragments`, its packed documents' (see packed-documents.ts). */
  constructor(pool: () => pg.Pool, schema: string, fragments: Fragments) {
    this.pool = pool;
    this.fragments = fragments;
    this.sql = new ListingSql<unknown>({
      table: (name) => `${schema}.${name}`,
      asciiLower: (sql) => `translate(${sql}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`,
      textParameter: '?::text',
      textPosition: 'position',
      indexedBy: () => '',
      integer: (sql) => `${sql}::integer`,
      integerArray: (expression) => `coalesce(json_agg(${expression}), '[]'::json)`,
      anyInteger: (column) => `${column} = ANY(?::integer[])`,
      integerParams: (values) => [values],
      orderedPositions: 'unnest(?::integer[]) WITH ORDINALITY AS p(position, n)',
      positionsParam: (positions) => positions,
      numberedParameters: true,
    });
  }

  /** The posting lists of these tokens (see postings.ts). */
  postingLists(table: string, tokens: readonly string[]): Promise<PostingList[]> {
    return readPostingLists(this.pool(), table, tokens);
  }

  async rows<Row extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<Row[]> {
    return query<Row>(this.pool(), this.sql.driverText(sql), params);
  }

  /** The verified documents of a query's rows (see verifiedRows), read from the listing's JSON table. */
  private async json({ sql, params }: Query<unknown>, listing: PgListing): Promise<string[]> {
    return verifiedRows(await this.rows<CheckedRow>(sql, params), listing.jsonTable, this.fragments);
  }

  async count(listing: PgListing): Promise<number> {
    const { sql, params } = this.sql.count(listing);
    return (await this.rows<{ n: number }>(sql, params))[0]?.n ?? 0;
  }

  /** Organizations per value of a facet in a listing, or (no listing) in the unfiltered list. */
  facetCounts(listing: PgListing | undefined, facets: readonly number[]): Promise<FacetCount[]> {
    const { sql, params } = this.sql.facetCounts(listing, facets);
    return this.rows<FacetCount>(sql, params);
  }

  /** See ListingSql.candidates. */
  candidates(listing: PgListing, limit: number, walk: boolean): Promise<Candidate[]> {
    const { sql, params } = this.sql.candidates(listing, limit, walk);
    return this.rows<Candidate>(sql, params);
  }

  /** The JSON of these positions, in the order given. */
  async jsonOf(listing: PgListing, positions: readonly number[]): Promise<string[]> {
    return positions.length === 0 ? [] : this.json(this.sql.jsonOf(listing, positions), listing);
  }

  /** The items at 0-based `offset`, in order (by relevance first when `ranked`), in one query. */
  items(listing: PgListing, offset: number, limit: number, ranked: boolean): Promise<string[]> {
    return this.json(this.sql.page(listing, offset, limit, ranked), listing);
  }

  /** Every item, in order, a batch at a time (see inBatches). */
  all(listing: PgListing, ranked: boolean): AsyncGenerator<string[]> {
    return inBatches(this.sql, listing, ranked, BATCH, (page) => this.json(page, listing), async ({ sql, params }) => {
      const rows = await this.rows<CheckedRow & { k: number }>(sql, params);
      return { keys: rows.map((row) => row.k), json: verifiedRows(rows, listing.jsonTable, this.fragments) };
    });
  }
}
