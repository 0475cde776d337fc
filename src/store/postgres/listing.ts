import type pg from 'pg';
import { query } from './connection.ts';
import type { Listing } from '../listing.ts';
import { queryWords } from '../search-text.ts';
import type { FacetCount } from '../facets.ts';
import { matchExpression } from '../search-query.ts';
import type { Candidate, SearchQuery } from '../search-query.ts';
import type { SearchWords } from '../store.ts';
import { readPostingLists } from './postings.ts';
import type { PostingList } from './postings.ts';

/**
 * A listing (see ../listing.ts); its parameters are written `?` and numbered when the query is made.
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

/** `?` placeholders as $1, $2, … (no SQL here holds a literal question mark). */
const numbered = (sql: string): string => {
  let index = 0;
  return sql.replaceAll('?', () => `$${++index}`);
};

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

  /** `pool` gives the pool of each query (replicas in turn). */
  constructor(pool: () => pg.Pool) {
    this.pool = pool;
  }

  /** Each SQL text as sent ($n placeholders), made once: a generation's SQL texts are few. */
  private readonly numberedSql = new Map<string, string>();

  /** The posting lists of these tokens (see postings.ts). */
  postingLists(table: string, tokens: readonly string[]): Promise<PostingList[]> {
    return readPostingLists(this.pool(), table, tokens);
  }

  async rows<Row extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<Row[]> {
    let text = this.numberedSql.get(sql);
    if (text === undefined) {
      text = numbered(sql);
      this.numberedSql.set(sql, text);
    }
    return query<Row>(this.pool(), text, params);
  }

  private static where(listing: PgListing, extra: string[] = []): string {
    const conditions = [...listing.where, ...extra];
    return conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  }

  async count(listing: PgListing): Promise<number> {
    if (listing.length !== undefined) return (await this.rows<{ n: number }>(listing.length.sql, listing.length.params))[0]?.n ?? 0;
    const rows = await this.rows<{ n: number }>(`SELECT count(*)::integer AS n FROM ${listing.from}${PgListingRunner.where(listing)}`, listing.params);
    return rows[0]!.n;
  }

  /** Organizations per value of a facet in a listing, or (no listing) in the unfiltered list (tables as named in this generation). */
  facetCounts(listing: PgListing | undefined, facets: readonly number[], countsTable: string, facetsTable: string): Promise<FacetCount[]> {
    if (listing === undefined) return this.rows(`SELECT facet, value, organizations AS count FROM ${countsTable} WHERE facet = ANY(?::integer[])`, [facets]);
    const positions = `SELECT ${listing.position} AS position FROM ${listing.from}${PgListingRunner.where(listing)}`;
    const sql = `SELECT f.facet, f.value, count(*)::integer AS count FROM (${positions}) p JOIN ${facetsTable} f ON f.position = p.position AND f.facet = ANY(?::integer[]) GROUP BY f.facet, f.value`;
    return this.rows(sql, [...listing.params, facets]);
  }

  /**
   * The first `limit` matches of an organization search in list order, with their positions and what
   * they are ranked by. `walk`: read the list order until there are enough; else all matches are
   * sorted (`+ 0` keeps the planner from walking).
   */
  candidates(listing: PgListing, limit: number, walk: boolean): Promise<Candidate[]> {
    const { rank, names } = listing.candidates!;
    const order = walk ? listing.order : `${listing.order} + 0`;
    const sql = `SELECT ${listing.position} AS position, ${rank} AS rank, ${names} AS names FROM ${listing.from}${PgListingRunner.where(listing)} ORDER BY ${order} LIMIT ?`;
    return this.rows<Candidate>(sql, [...listing.params, limit]);
  }

  /** The JSON of these positions, in the order given. */
  async jsonOf(listing: PgListing, positions: readonly number[]): Promise<string[]> {
    if (positions.length === 0) return [];
    const rows = await this.rows<{ json: string }>(
      `SELECT j.${listing.jsonColumn} AS json FROM unnest(?::integer[]) WITH ORDINALITY AS p(position, n) JOIN ${listing.jsonTable} j ON j.position = p.position ORDER BY p.n`,
      [positions],
    );
    return rows.map((row) => row.json);
  }

  private static ranked(listing: PgListing, ranked: boolean): boolean {
    return ranked && listing.ranking !== undefined;
  }

  /** The items at 0-based `offset`, in order (by relevance first when `ranked`), in one query. */
  async items(listing: PgListing, offset: number, limit: number, ranked: boolean): Promise<string[]> {
    const rank = PgListingRunner.ranked(listing, ranked);
    const sql = `SELECT j.${listing.jsonColumn} AS json FROM (
        SELECT ${listing.position} AS p, ${rank ? `${listing.ranking} AS r, ` : ''}${listing.order} AS k
        FROM ${listing.from}${PgListingRunner.where(listing)}
        ORDER BY ${rank ? 'r, ' : ''}k LIMIT ? OFFSET ?
      ) page JOIN ${listing.jsonTable} j ON j.position = page.p ORDER BY ${rank ? 'page.r, ' : ''}page.k`;
    const params = rank ? [...(listing.rankingParams ?? []), ...listing.params, limit, offset] : [...listing.params, limit, offset];
    return (await this.rows<{ json: string }>(sql, params)).map((row) => row.json);
  }

  /**
   * Every item, in order, a batch at a time. In list order each batch resumes after the last key
   * seen (no OFFSET); ranked lists are small (see RANKED_SEARCH_LIMIT) and are read in pages.
   */
  async *all(listing: PgListing, ranked: boolean): AsyncGenerator<string[]> {
    if (PgListingRunner.ranked(listing, ranked)) {
      for (let offset = 0; ; offset += BATCH) {
        const items = await this.items(listing, offset, BATCH, true);
        if (items.length > 0) yield items;
        if (items.length < BATCH) return;
      }
    }
    const sql = `SELECT page.k, j.${listing.jsonColumn} AS json FROM (
        SELECT ${listing.position} AS p, ${listing.order} AS k
        FROM ${listing.from}${PgListingRunner.where(listing, [`${listing.order} > ?`])}
        ORDER BY k LIMIT ${BATCH}
      ) page JOIN ${listing.jsonTable} j ON j.position = page.p ORDER BY page.k`;
    for (let after = 0; ; ) {
      const rows = await this.rows<{ k: number; json: string }>(sql, [...listing.params, after]);
      if (rows.length > 0) yield rows.map((row) => row.json);
      if (rows.length < BATCH) return;
      after = rows.at(-1)!.k;
    }
  }
}
