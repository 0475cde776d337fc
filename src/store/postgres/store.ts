import type pg from 'pg';
import { findTaxonomyRow, findTermRow, isOneWordSearch, membershipOf, simplifiedFilter } from '../filter-plan.ts';
import type { Membership, ModifiedRange, TaxonomyRow, TermLookups, TermRow } from '../filter-plan.ts';
import { RANKED_SEARCH_LIMIT } from '../store.ts';
import type {
  Batches,
  DatasetInfo,
  OrganizationFilter,
  OrganizationView,
  Page,
  PositionRange,
  Store,
  TaxonomyFilter,
  TaxonomyRef,
  TaxonomyTermFilter,
  TaxonomyTermRef,
} from '../store.ts';
import { query } from './connection.ts';
import { GENERATION_FORMAT, generationSchema } from './generation-schema.ts';
import { PgListingRunner, textSearch } from './listing.ts';
import type { PgListing } from './listing.ts';

const EMPTY: Page = { total: 0, items: [] };

/** What a generation's store keeps in memory: read once, when the generation is opened. */
export interface GenerationFacts {
  generation: number;
  info: DatasetInfo;
  modifiedRange: ModifiedRange;
  taxonomies: TaxonomyRow[];
  /** Lengths of the membership lists, by table and key. */
  listLengths: Map<string, number>;
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

const listKey = (membership: Membership): string => `${membership.table}:${membership.key}`;

/** ASCII-only lower case, as SQLite's lower() (so codes match alike on both backends). */
const asciiLower = (sql: string) => `translate(${sql}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;

/** One published generation in PostgreSQL, read through pools of the primary or replicas. */
export class PostgresStore implements Store {
  private readonly facts: GenerationFacts;
  private readonly schema: string;
  private readonly runner: PgListingRunner;
  private readonly termLookups: TermLookups;

  constructor(pool: () => pg.Pool, facts: GenerationFacts) {
    this.facts = facts;
    this.schema = generationSchema(facts.generation);
    this.runner = new PgListingRunner(pool);
    const termRef = `SELECT t.id, x.id AS "taxonomyId", t.position, t.taxonomy_position FROM ${this.schema}.taxonomy_terms t
      JOIN ${this.schema}.taxonomies x ON x.position = t.taxonomy_position`;
    const one = async (sql: string, params: unknown[]) => (await this.runner.rows<TermRow>(sql, params))[0];
    this.termLookups = {
      byId: (id) => one(`${termRef} WHERE t.id = ?`, [id]),
      byCode: (taxonomy, code) => one(`${termRef} WHERE t.taxonomy_position = ? AND t.code = ?`, [taxonomy, code]),
      byCodeAnyCase: (taxonomy, code) =>
        one(`${termRef} WHERE t.taxonomy_position = ? AND ${asciiLower('t.code')} = ${asciiLower('?::text')} ORDER BY t.position LIMIT 1`, [taxonomy, code]),
    };
  }

  /** Reads what a store of this generation keeps in memory. */
  static async facts(pool: pg.Pool, generation: number): Promise<GenerationFacts> {
    const schema = generationSchema(generation);
    const [row] = await query<GenerationRow>(pool, 'SELECT * FROM hsds.generations WHERE id = $1', [generation]);
    if (row === undefined) throw new Error(`generation ${generation} is not in hsds.generations`);
    if (row.format !== GENERATION_FORMAT) throw new Error(`generation ${generation} has format ${row.format}, not ${GENERATION_FORMAT} (built by another version?); publish again`);
    const taxonomies = await query<TaxonomyRow>(pool, `SELECT position, id, code FROM ${schema}.taxonomies ORDER BY position`);
    const lengths = await query<{ list: string; key: number; length: number }>(pool, `SELECT list, key, length FROM ${schema}.list_lengths`);
    return {
      generation,
      info: { version: row.version, publishedAt: row.published_at, organizations: row.organizations, taxonomies: row.taxonomies, taxonomyTerms: row.taxonomy_terms },
      modifiedRange: { oldest: row.oldest_modified, newest: row.newest_modified },
      taxonomies,
      listLengths: new Map(lengths.map((length) => [`${length.list}:${length.key}`, length.length])),
    };
  }

  private table(name: string): string {
    return `${this.schema}.${name}`;
  }

  private async one(sql: string, param: string): Promise<string | undefined> {
    return (await this.runner.rows<{ json: string }>(sql, [param]))[0]?.json;
  }

  private async page(listing: PgListing | undefined, range: PositionRange): Promise<Page> {
    if (listing === undefined) return EMPTY;
    const total = await this.runner.count(listing);
    return { total, items: range.first > total ? [] : await this.runner.items(listing, range.first - 1, range.count, total <= RANKED_SEARCH_LIMIT) };
  }

  private async *all(listing: PgListing | undefined): Batches {
    if (listing === undefined) return;
    yield* this.runner.all(listing, listing.ranking !== undefined && (await this.runner.count(listing)) <= RANKED_SEARCH_LIMIT);
  }

  async info(): Promise<DatasetInfo> {
    return this.facts.info;
  }

  private jsonTable(view: OrganizationView): string {
    return this.table(view.full === true ? 'organization_documents' : 'organization_items');
  }

  private async organizationListing(filter: OrganizationFilter, view: OrganizationView): Promise<PgListing | undefined> {
    const membership = await membershipOf(filter, this.facts.taxonomies, this.termLookups.byId);
    if (membership === 'none') return undefined;
    const base = { jsonTable: this.jsonTable(view), jsonColumn: 'json' as const };
    const memberCondition = (position: string) =>
      membership === undefined
        ? []
        : [`EXISTS (SELECT 1 FROM ${this.table(membership.table)} m WHERE m.${membership.group}_position = ? AND m.organization_position = ${position})`];
    const memberParams = membership === undefined ? [] : [membership.key];
    const modified = filter.modifiedSince === undefined ? [] : ['o.modified_at >= ?'];
    const modifiedParams = filter.modifiedSince === undefined ? [] : [filter.modifiedSince];
    if (filter.search !== undefined) {
      const text = textSearch(filter.search);
      return {
        ...base,
        from: `${this.table('organizations_text')} x${filter.modifiedSince === undefined ? '' : ` JOIN ${this.table('organizations')} o ON o.position = x.position`}`,
        where: [text.where, ...memberCondition('x.position'), ...modified],
        params: [text.param, ...memberParams, ...modifiedParams],
        order: 'x.position',
        ranking: text.ranking,
        rankingParams: text.rankingParams,
        position: 'x.position',
        length: isOneWordSearch(filter, membership)
          ? { sql: `SELECT organizations AS n FROM ${this.table('organization_word_counts')} WHERE word = ?`, params: text.words }
          : undefined,
      };
    }
    if (membership !== undefined) {
      const group = membership.group;
      return {
        ...base,
        from: `${this.table(membership.table)} m JOIN ${this.table('organizations')} o ON o.position = m.organization_position`,
        where: [`m.${group}_position = ?`, ...modified],
        params: [membership.key, ...modifiedParams],
        order: `m.position_in_${group}`,
        position: 'm.organization_position',
      };
    }
    return { ...base, from: `${this.table('organizations')} o`, where: modified, params: modifiedParams, order: 'o.position', position: 'o.position' };
  }

  /** Without search or `modifiedSince`, a page is a range of positions and its total a known length. */
  private async positionalPage(filter: OrganizationFilter, view: OrganizationView, range: PositionRange): Promise<Page | undefined> {
    if (filter.search !== undefined || filter.modifiedSince !== undefined) return undefined;
    const membership = await membershipOf(filter, this.facts.taxonomies, this.termLookups.byId);
    if (membership === 'none') return EMPTY;
    const end = range.first + range.count;
    if (membership === undefined) {
      const total = this.facts.info.organizations;
      if (range.first > total) return { total, items: [] };
      const rows = await this.runner.rows<{ json: string }>(`SELECT json FROM ${this.jsonTable(view)} WHERE position >= ? AND position < ? ORDER BY position`, [range.first, end]);
      return { total, items: rows.map((row) => row.json) };
    }
    const { table, group, key } = membership;
    const total = this.facts.listLengths.get(listKey(membership)) ?? 0;
    if (range.first > total) return { total, items: [] };
    const rows = await this.runner.rows<{ json: string }>(
      `SELECT o.json FROM ${this.table(table)} m JOIN ${this.jsonTable(view)} o ON o.position = m.organization_position
       WHERE m.${group}_position = ? AND m.position_in_${group} >= ? AND m.position_in_${group} < ? ORDER BY m.position_in_${group}`,
      [key, range.first, end],
    );
    return { total, items: rows.map((row) => row.json) };
  }

  async organizations(filter: OrganizationFilter, range: PositionRange, view: OrganizationView = {}): Promise<Page> {
    const simple = simplifiedFilter(filter, this.facts.modifiedRange);
    if (simple === undefined) return EMPTY;
    return (await this.positionalPage(simple, view, range)) ?? this.page(await this.organizationListing(simple, view), range);
  }

  async *allOrganizations(filter: OrganizationFilter, view: OrganizationView = {}): Batches {
    const simple = simplifiedFilter(filter, this.facts.modifiedRange);
    if (simple !== undefined) yield* this.all(await this.organizationListing(simple, view));
  }

  async organization(id: string): Promise<string | undefined> {
    return this.one(`SELECT d.json FROM ${this.table('organizations')} o JOIN ${this.table('organization_documents')} d ON d.position = o.position WHERE o.id = ?`, id);
  }

  async organizationIdByNativeId(nativeId: string): Promise<string | undefined> {
    return this.one(`SELECT id AS json FROM ${this.table('organizations')} WHERE external_id = ?`, nativeId);
  }

  private taxonomyListing(filter: TaxonomyFilter): PgListing {
    const base = { jsonTable: this.table('taxonomies'), jsonColumn: 'json' as const };
    if (filter.search === undefined) return { ...base, from: this.table('taxonomies'), where: [], params: [], order: 'position', position: 'position' };
    const text = textSearch(filter.search);
    return { ...base, from: `${this.table('taxonomies_text')} x`, where: [text.where], params: [text.param], order: 'x.position', ranking: text.ranking, rankingParams: text.rankingParams, position: 'x.position' };
  }

  async taxonomies(filter: TaxonomyFilter, range: PositionRange): Promise<Page> {
    return this.page(this.taxonomyListing(filter), range);
  }

  allTaxonomies(filter: TaxonomyFilter): Batches {
    return this.all(this.taxonomyListing(filter));
  }

  async taxonomy(id: string): Promise<string | undefined> {
    return this.one(`SELECT json FROM ${this.table('taxonomies')} WHERE id = ?`, id);
  }

  private async termListing(filter: TaxonomyTermFilter): Promise<PgListing | undefined> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.taxonomyId !== undefined) {
      const taxonomy = this.facts.taxonomies.find((row) => row.id === filter.taxonomyId);
      if (taxonomy === undefined) return undefined;
      where.push('t.taxonomy_position = ?');
      params.push(taxonomy.position);
    }
    if (filter.parentId !== undefined) {
      const parent = await this.termLookups.byId(filter.parentId);
      if (parent === undefined) return undefined;
      where.push('t.parent_position = ?');
      params.push(parent.position);
    }
    if (filter.topOnly === true) where.push('t.parent_position IS NULL');
    const base = { jsonTable: this.table('taxonomy_terms'), jsonColumn: 'json' as const };
    if (filter.search === undefined) return { ...base, from: `${this.table('taxonomy_terms')} t`, where, params, order: 't.position', position: 't.position' };
    const text = textSearch(filter.search);
    return {
      ...base,
      from: `${this.table('taxonomy_terms_text')} x JOIN ${this.table('taxonomy_terms')} t ON t.position = x.position`,
      where: [text.where, ...where],
      params: [text.param, ...params],
      order: 't.position',
      ranking: text.ranking,
      rankingParams: text.rankingParams,
      position: 't.position',
    };
  }

  async taxonomyTerms(filter: TaxonomyTermFilter, range: PositionRange): Promise<Page> {
    return this.page(await this.termListing(filter), range);
  }

  async *allTaxonomyTerms(filter: TaxonomyTermFilter): Batches {
    yield* this.all(await this.termListing(filter));
  }

  async taxonomyTerm(id: string): Promise<string | undefined> {
    return this.one(`SELECT detail_json AS json FROM ${this.table('taxonomy_terms')} WHERE id = ?`, id);
  }

  async findTaxonomy(idOrCode: string): Promise<TaxonomyRef | undefined> {
    const row = findTaxonomyRow(this.facts.taxonomies, idOrCode);
    return row === undefined ? undefined : { id: row.id, code: row.code };
  }

  async findTaxonomyTerm(idOrCode: string): Promise<TaxonomyTermRef | undefined> {
    return findTermRow(idOrCode, this.facts.taxonomies, this.termLookups);
  }

  async taxonomyCodes(): Promise<string[]> {
    return this.facts.taxonomies.map((row) => row.code);
  }

  /** The pools belong to the provider, which ends them. */
  async close(): Promise<void> {}
}
