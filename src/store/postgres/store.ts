import type pg from 'pg';
import { isSearchAlone, membershipConditions } from '../filter-plan.ts';
import { matchClauses } from '../search-query.ts';
import { KeptValues } from '../kept-values.ts';
import type { SearchCategories } from '../search-categories.ts';
import type { QueryWord, SearchQuery } from '../search-query.ts';
import type { Candidate } from '../search-ranking.ts';
import { Vocabulary } from '../search-vocabulary.ts';
import { facetLabels } from '../facets.ts';
import type { FacetCount, FacetLabels } from '../facets.ts';
import type { VocabularyEntry } from '../search-vocabulary.ts';
import type { Membership, ModifiedRange, TaxonomyRow, TermLookups, TermRow } from '../filter-plan.ts';
import type { ListingSql } from '../listing-sql.ts';
import { ListingStore, isDocument } from '../listing-store.ts';
import { verifiedRows } from '../document-check.ts';
import type { CheckedRow } from '../document-check.ts';
import { Fragments } from '../packed-documents.ts';
import type { ItemKind, ListingBackend, TermConditions } from '../listing-store.ts';
import { RANKED_SEARCH_LIMIT } from '../store.ts';
import type { Batches, DatasetInfo, DatasetVersion, OrganizationFilter, OrganizationView, Page, PositionRange, SearchWords } from '../store.ts';
import { query } from './connection.ts';
import { generationSchema, POSTINGS_TABLE } from './generation-schema.ts';
import { HISTORY_COLUMNS, STORE_FORMAT } from '../tables.ts';
import { PostingListCache, PostingsMatcher } from './postings.ts';
import type { Matches } from './postings.ts';
import { organizationTsquery, PgListingRunner, textSearch } from './listing.ts';
import type { PgListing, PostingsClause } from './listing.ts';

/** What a generation's store keeps in memory: read once, when the generation is opened. */
export interface GenerationFacts {
  generation: number;
  info: DatasetInfo;
  modifiedRange: ModifiedRange;
  history: DatasetVersion[];
  taxonomies: TaxonomyRow[];
  /** Lengths of the membership lists, by table and key. */
  listLengths: Map<string, number>;
  vocabulary: Vocabulary;
  facetLabels: FacetLabels;
  fragments: Fragments;
}

/** A row of hsds.generations (see migrations/0001_generations.sql). */
interface GenerationRow {
  format: number;
  version: string;
  published_at: string;
  organizations: number;
  taxonomies: number;
  taxonomy_terms: number;
  oldest_modified: string | null;
  newest_modified: string | null;
}

/** Searches whose matches are kept (a count and the first RANKED_SEARCH_LIMIT ranks each: 4 KB). */
const MATCHES_KEPT = 64;
/** Bytes of posting lists kept per generation: all of them at 326,224 organizations (7.6 MB), about half at 2,000,000 (32 MB). */
const POSTING_LISTS_KEPT = 16 * 1024 * 1024;

const tokensOf = (word: QueryWord): string[] => [...word.alternatives.keys()];

const listKey = (membership: Pick<Membership, 'table' | 'key'>): string => `${membership.table}:${membership.key}`;

/** ASCII-only lower case, as SQLite's lower() (so codes match alike on both backends). */

/** Reads what a store of this generation keeps in memory. */
export async function generationFacts(pool: pg.Pool, generation: number): Promise<GenerationFacts> {
  const schema = generationSchema(generation);
  const [row] = await query<GenerationRow>(pool, 'SELECT * FROM hsds.generations WHERE id = $1', [generation]);
  if (row === undefined) throw new Error(`generation ${generation} is not in hsds.generations`);
  if (row.format !== STORE_FORMAT) throw new Error(`generation ${generation} has format ${row.format}, not ${STORE_FORMAT} (built by another version?); publish again`);
  const taxonomies = await query<TaxonomyRow>(pool, `SELECT position, id, code FROM ${schema}.taxonomies ORDER BY position`);
  const lengths = await query<{ list: string; key: number; length: number }>(pool, `SELECT list, key, length FROM ${schema}.list_lengths`);
  const terms = await query<{ position: number; id: string; code: string; taxonomy_position: number; json: string }>(pool, `SELECT position, id, code, taxonomy_position, json FROM ${schema}.taxonomy_terms`);
  const taxStatuses = await query<{ position: number; value: string }>(pool, `SELECT position, value FROM ${schema}.tax_statuses`);
  const words = await query<VocabularyEntry>(pool, `SELECT word, token, organizations FROM ${schema}.search_vocabulary ORDER BY word`);
  const history = await query<DatasetVersion>(pool, `SELECT ${HISTORY_COLUMNS} FROM ${schema}.dataset_versions ORDER BY sequence`);
  const fragments = await query<{ position: number; text: string }>(pool, `SELECT position, text FROM ${schema}.document_fragments`);
  return {
    generation,
    info: { version: row.version, publishedAt: row.published_at, organizations: row.organizations, taxonomies: row.taxonomies, taxonomyTerms: row.taxonomy_terms },
    modifiedRange: { oldest: row.oldest_modified, newest: row.newest_modified },
    history,
    taxonomies,
    listLengths: new Map(lengths.map((length) => [`${length.list}:${length.key}`, length.length])),
    vocabulary: new Vocabulary(words),
    facetLabels: facetLabels(terms, taxStatuses),
    fragments: new Fragments(fragments.map((row) => [row.position, row.text] as const)),
  };
}

/** The SQL of one published generation in PostgreSQL, read through pools of the primary or replicas. */
class PostgresBackend implements ListingBackend<unknown> {
  private readonly facts: GenerationFacts;
  private readonly runner: PgListingRunner;
  private readonly sql: ListingSql<unknown>;
  readonly terms: TermLookups;

  constructor(pool: () => pg.Pool, facts: GenerationFacts) {
    this.facts = facts;
    this.runner = new PgListingRunner(pool, generationSchema(facts.generation), facts.fragments);
    this.sql = this.runner.sql;
    const one = async (sql: string, params: unknown[]) => (await this.runner.rows<TermRow>(sql, params))[0];
    const lookups = this.sql.termLookups;
    this.terms = {
      byId: (id) => one(lookups.byId, [id]),
      byCode: (taxonomy, code) => one(lookups.byCode, [taxonomy, code]),
      byCodeAnyCase: (taxonomy, code) => one(lookups.byCodeAnyCase, [taxonomy, code]),
    };
  }

  get info(): DatasetInfo {
    return this.facts.info;
  }

  get taxonomies(): TaxonomyRow[] {
    return this.facts.taxonomies;
  }

  get vocabulary(): Vocabulary {
    return this.facts.vocabulary;
  }

  get facetLabels(): FacetLabels {
    return this.facts.facetLabels;
  }

  termSize(term: number): number {
    return this.facts.listLengths.get(listKey({ table: 'organization_terms', key: term })) ?? 0;
  }

  facetCounts(listing: PgListing | undefined, facets: readonly number[]): Promise<FacetCount[]> {
    return this.runner.facetCounts(listing, facets);
  }

  get modifiedRange(): ModifiedRange {
    return this.facts.modifiedRange;
  }

  get history(): DatasetVersion[] {
    return this.facts.history;
  }

  async count(listing: PgListing): Promise<number> {
    if (listing.postings !== undefined) return (await this.matches(listing.postings)).count;
    return this.runner.count(listing);
  }

  /**
   * Searches matched from the posting lists, by their clauses, the latest MATCHES_KEPT: a page's
   * count and its first matches ask for the same one, at once or one after the other.
   */
  private readonly matching = new KeptValues<Promise<Matches>>(MATCHES_KEPT);
  private readonly matcher = new PostingsMatcher();
  private readonly postingLists = new PostingListCache(POSTING_LISTS_KEPT, (tokens) => this.runner.postingLists(this.sql.table(POSTINGS_TABLE), tokens));

  /** The organizations meeting any of a search's clauses: how many, and the first RANKED_SEARCH_LIMIT by search rank. */
  private matches(clauses: PostingsClause[]): Promise<Matches> {
    const key = JSON.stringify(clauses);
    return this.matching.get(key, () => {
      const matches = this.readPostings(clauses);
      // A failed reading is not kept: the next search reads again.
      matches.catch(() => this.matching.forget(key, matches));
      return matches;
    });
  }

  private async readPostings(clauses: PostingsClause[]): Promise<Matches> {
    const tokens = new Set(clauses.flatMap(({ words, excluded }) => [...words.flat(), ...excluded.flat()]));
    return this.matcher.matchAny(clauses, await this.postingLists.get([...tokens]), RANKED_SEARCH_LIMIT);
  }

  items(listing: PgListing, offset: number, limit: number, ranked: boolean): Promise<string[]> {
    return this.runner.items(listing, offset, limit, ranked);
  }

  /**
   * A search alone takes its first matches from the posting lists (see `matches`). Otherwise,
   * matches that are many are found soonest by walking the index in rank order; few, by the text
   * index and a sort. Spread evenly, the walk reads about limit × organizations / matches rows and
   * the sort all the matches: the walk is cheaper when matches² exceeds limit × organizations.
   */
  async candidates(listing: PgListing, limit: number, matches: number): Promise<Candidate[]> {
    if (listing.postings !== undefined) {
      const ranks = (await this.matches(listing.postings)).first.subarray(0, limit);
      if (ranks.length === 0) return [];
      return this.runner.rows<Candidate>(
        `SELECT x.organization_position AS position, x.position AS rank, x.names FROM ${this.sql.table('organizations_text')} x WHERE x.position = ANY(?::integer[]) ORDER BY x.position`,
        [[...ranks]],
      );
    }
    const walk = matches * matches > limit * this.facts.info.organizations;
    return this.runner.candidates(listing, limit, walk);
  }

  jsonOf(listing: PgListing, positions: readonly number[]): Promise<string[]> {
    return this.runner.jsonOf(listing, positions);
  }

  all(listing: PgListing, ranked: boolean): Batches {
    return this.runner.all(listing, ranked);
  }

  async organizationsByPosition(membership: Membership | undefined, view: OrganizationView, range: PositionRange): Promise<Page> {
    const end = range.first + range.count;
    const total = membership === undefined ? this.facts.info.organizations : (this.facts.listLengths.get(listKey(membership)) ?? 0);
    if (range.first > total) return { total, items: [] };
    const params = membership === undefined ? [range.first, end] : [membership.key, range.first, end];
    const rows = await this.runner.rows<CheckedRow>(this.sql.pageByPosition(membership, view), params);
    return { total, items: verifiedRows(rows, this.sql.organizationJson(view).jsonTable, this.facts.fragments) };
  }

  organizationListing(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView, query?: SearchQuery): PgListing {
    if (query === undefined) return this.sql.organizationListing(filter, memberships, view);
    const modified = this.sql.modifiedSince(filter);
    const members = membershipConditions<unknown>(memberships, 'x.organization_position', (name) => this.sql.table(name));
    const modifiedJoin = filter.modifiedSince === undefined ? '' : ` JOIN ${this.sql.table('organizations')} o ON o.position = x.organization_position`;
    return {
      ...this.sql.organizationJson(view),
      from: `${this.sql.table('organizations_text')} x${modifiedJoin}`,
      where: ['x.words @@ ?::tsquery', ...members.where, ...modified.where],
      params: [organizationTsquery(query), ...members.params, ...modified.params],
      order: 'x.position',
      position: 'x.organization_position',
      candidates: { rank: 'x.position', names: 'x.names' },
      postings:
        isSearchAlone(filter, memberships) && query.words.length > 0
          ? matchClauses(query).map(({ held, excluded }) => ({ words: held.map(tokensOf), excluded: excluded.map(tokensOf) }))
          : undefined,
    };
  }

  taxonomyListing(search: SearchWords | undefined): PgListing {
    return this.sql.taxonomyListing(search === undefined ? undefined : textSearch(search));
  }

  /** The driver parses the JSON array. */
  async categoryMembers(filter: OrganizationFilter, memberships: readonly Membership[], categories: SearchCategories): Promise<number[]> {
    const { sql, params } = this.sql.categoryMembers(filter, memberships, categories);
    return (await this.runner.rows<{ keys: number[] }>(sql, params))[0]?.keys ?? [];
  }

  positionsListing(view: OrganizationView, positions: readonly number[]): PgListing {
    return this.sql.positionsListing(view, positions);
  }

  removedListing(since: string): PgListing {
    return this.sql.removedListing(since);
  }

  termListing(conditions: TermConditions<unknown>, search: SearchWords | undefined): PgListing {
    return this.sql.termListing(conditions, search === undefined ? undefined : textSearch(search));
  }

  async item(kind: ItemKind, key: string): Promise<string | undefined> {
    const [row] = await this.runner.rows<CheckedRow>(this.sql.items[kind], [key]);
    if (row === undefined || !isDocument(kind)) return row?.json;
    return verifiedRows([row], `the ${kind} ${key}`, this.facts.fragments)[0];
  }

  /** The pools belong to the provider (live.ts), which ends them. */
  async close(): Promise<void> {}
}

/** One published generation in PostgreSQL (see generation-schema.ts). */
export class PostgresStore extends ListingStore<unknown> {
  constructor(pool: () => pg.Pool, facts: GenerationFacts) {
    super(new PostgresBackend(pool, facts));
  }
}
