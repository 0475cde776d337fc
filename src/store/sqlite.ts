import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import { DatasetKey, SNAPSHOT_FORMAT } from './sqlite-schema.ts';
import { ListingRunner, textSearch } from './sqlite-listing.ts';
import type { Listing } from './sqlite-listing.ts';
import { findTaxonomyRow, findTermRow, isOneWordSearch, membershipOf, simplifiedFilter } from './filter-plan.ts';
import type { ModifiedRange, TaxonomyRow, TermLookups, TermRow } from './filter-plan.ts';
import { RANKED_SEARCH_LIMIT } from './store.ts';
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
} from './store.ts';

interface JsonRow {
  json: string;
}

const EMPTY: Page = { total: 0, items: [] };

/** Where an organization's JSON is, as listed or in full (see sqlite-schema.ts). */
const organizationJsonTable = (view: OrganizationView) => (view.full === true ? ('organization_documents' as const) : ('organization_items' as const));

const noBatches = async function* (): Batches {};

/** The embedded default backend: one read-only SQLite snapshot file (see sqlite-schema.ts). */
export class SqliteStore implements Store {
  private readonly db: DatabaseSync;
  private readonly datasetInfo: DatasetInfo;
  private readonly taxonomyRows: TaxonomyRow[];
  private readonly listings: ListingRunner;
  /** The oldest and newest `last_modified`: a `modifiedSince` outside them selects all or nothing. */
  private readonly modifiedRange: ModifiedRange;
  private readonly termLookups: TermLookups;
  private readonly statements: {
    organization: StatementSync;
    organizationIdByNativeId: StatementSync;
    taxonomy: StatementSync;
    term: StatementSync;
    termById: StatementSync;
    termByCode: StatementSync;
    termByCodeAnyCase: StatementSync;
  };

  constructor(file: string) {
    this.db = new DatabaseSync(file, { readOnly: true });
    let meta: Map<string, string>;
    try {
      meta = new Map((this.db.prepare('SELECT key, value FROM dataset').all() as { key: string; value: string }[]).map((row) => [row.key, row.value]));
    } catch (error) {
      this.db.close();
      throw error;
    }
    if (meta.get(DatasetKey.format) !== String(SNAPSHOT_FORMAT)) {
      this.db.close();
      throw new Error(`${file} is not a snapshot of format ${SNAPSHOT_FORMAT} (built by another version?); delete it to rebuild`);
    }
    this.taxonomyRows = this.db.prepare('SELECT position, id, code FROM taxonomies ORDER BY position').all() as unknown as TaxonomyRow[];
    const count = (table: string) => (this.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    this.datasetInfo = {
      version: meta.get(DatasetKey.version)!,
      publishedAt: meta.get(DatasetKey.publishedAt)!,
      organizations: count('organizations'),
      taxonomies: this.taxonomyRows.length,
      taxonomyTerms: count('taxonomy_terms'),
    };
    this.listings = new ListingRunner(this.db);
    this.modifiedRange = this.db.prepare('SELECT min(modified_at) AS oldest, max(modified_at) AS newest FROM organizations').get() as unknown as ModifiedRange;
    const termRef = 'SELECT t.id, x.id AS taxonomyId, t.position, t.taxonomy_position FROM taxonomy_terms t JOIN taxonomies x ON x.position = t.taxonomy_position';
    this.statements = {
      organization: this.db.prepare('SELECT d.json FROM organizations o JOIN organization_documents d ON d.position = o.position WHERE o.id = ?'),
      organizationIdByNativeId: this.db.prepare('SELECT id AS json FROM organizations WHERE external_id = ?'),
      taxonomy: this.db.prepare('SELECT json FROM taxonomies WHERE id = ?'),
      term: this.db.prepare('SELECT detail_json AS json FROM taxonomy_terms WHERE id = ?'),
      termById: this.db.prepare(`${termRef} WHERE t.id = ?`),
      termByCode: this.db.prepare(`${termRef} WHERE t.taxonomy_position = ? AND t.code = ?`),
      termByCodeAnyCase: this.db.prepare(`${termRef} WHERE t.taxonomy_position = ? AND lower(t.code) = lower(?) ORDER BY t.position LIMIT 1`),
    };
    const { termById, termByCode, termByCodeAnyCase } = this.statements;
    this.termLookups = {
      byId: async (id) => termById.get(id) as TermRow | undefined,
      byCode: async (taxonomy, code) => termByCode.get(taxonomy, code) as TermRow | undefined,
      byCodeAnyCase: async (taxonomy, code) => termByCodeAnyCase.get(taxonomy, code) as TermRow | undefined,
    };
  }

  private static one(statement: StatementSync, id: string): string | undefined {
    return (statement.get(id) as JsonRow | undefined)?.json;
  }

  private page(listing: Listing | undefined, range: PositionRange): Page {
    if (listing === undefined) return EMPTY;
    const total = this.listings.count(listing);
    return { total, items: range.first > total ? [] : this.listings.items(listing, range.first - 1, range.count, total <= RANKED_SEARCH_LIMIT) };
  }

  private all(listing: Listing | undefined): Batches {
    if (listing === undefined) return noBatches();
    return this.listings.all(listing, listing.ranking !== undefined && this.listings.count(listing) <= RANKED_SEARCH_LIMIT);
  }

  async info(): Promise<DatasetInfo> {
    return this.datasetInfo;
  }

  /**
   * Unfiltered and term- or taxonomy-filtered lists are ranges of precomputed positions. Search and
   * `modifiedSince` are answered by the text index and the `modified_at` index, then ordered.
   */
  private async organizationListing(filter: OrganizationFilter, view: OrganizationView): Promise<Listing | undefined> {
    const membership = await membershipOf(filter, this.taxonomyRows, this.termLookups.byId);
    if (membership === 'none') return undefined;
    const base = { jsonTable: organizationJsonTable(view), jsonColumn: 'json' as const, params: [] as Listing['params'] };
    const memberCondition = (position: string) =>
      membership === undefined ? [] : [`EXISTS (SELECT 1 FROM ${membership.table} m WHERE m.${membership.group}_position = ? AND m.organization_position = ${position})`];
    const memberParams = membership === undefined ? [] : [membership.key];
    const modifiedParams = filter.modifiedSince === undefined ? [] : [filter.modifiedSince];
    if (filter.search !== undefined) {
      const text = textSearch('organizations_text', filter.search);
      const modified = filter.modifiedSince === undefined ? [] : ['o.modified_at >= ?'];
      return {
        ...base,
        from: filter.modifiedSince === undefined ? 'organizations_text' : 'organizations_text JOIN organizations o ON o.position = organizations_text.rowid',
        where: [text.where, ...memberCondition('organizations_text.rowid'), ...modified],
        params: [text.param, ...memberParams, ...modifiedParams],
        order: 'organizations_text.rowid',
        ranking: text.ranking,
        rankingParams: text.rankingParams,
        position: 'organizations_text.rowid',
        length: isOneWordSearch(filter, membership) ? { sql: 'SELECT organizations AS n FROM organization_word_counts WHERE word = ?', params: text.words } : undefined,
      };
    }
    if (membership !== undefined) {
      const group = membership.group;
      return {
        ...base,
        from: `${membership.table} m JOIN organizations o ON o.position = m.organization_position`,
        where: [`m.${group}_position = ?`, ...(filter.modifiedSince === undefined ? [] : ['o.modified_at >= ?'])],
        params: [membership.key, ...modifiedParams],
        order: `m.position_in_${group}`,
        position: 'm.organization_position',
      };
    }
    return {
      ...base,
      from: filter.modifiedSince === undefined ? 'organizations o' : 'organizations o INDEXED BY organizations_modified',
      where: filter.modifiedSince === undefined ? [] : ['o.modified_at >= ?'],
      params: modifiedParams,
      order: 'o.position',
      position: 'o.position',
    };
  }

  /** Without search or `modifiedSince`, a page is a range of positions and its total a stored count. */
  private async positionalPage(filter: OrganizationFilter, view: OrganizationView, range: PositionRange): Promise<Page | undefined> {
    if (filter.search !== undefined || filter.modifiedSince !== undefined) return undefined;
    const membership = await membershipOf(filter, this.taxonomyRows, this.termLookups.byId);
    if (membership === 'none') return EMPTY;
    const jsonTable = organizationJsonTable(view);
    const end = range.first + range.count;
    if (membership === undefined) {
      const total = this.datasetInfo.organizations;
      const rows = this.listings.statement(`SELECT json FROM ${jsonTable} WHERE position >= ? AND position < ? ORDER BY position`);
      return { total, items: range.first > total ? [] : (rows.all(range.first, end) as unknown as JsonRow[]).map((row) => row.json) };
    }
    const { table, group, key } = membership;
    const total = (this.listings.statement(`SELECT max(position_in_${group}) AS n FROM ${table} WHERE ${group}_position = ?`).get(key) as { n: number | null }).n ?? 0;
    const rows = this.listings.statement(
      `SELECT o.json FROM ${table} m JOIN ${jsonTable} o ON o.position = m.organization_position
       WHERE m.${group}_position = ? AND m.position_in_${group} >= ? AND m.position_in_${group} < ? ORDER BY m.position_in_${group}`,
    );
    return { total, items: range.first > total ? [] : (rows.all(key, range.first, end) as unknown as JsonRow[]).map((row) => row.json) };
  }

  async organizations(filter: OrganizationFilter, range: PositionRange, view: OrganizationView = {}): Promise<Page> {
    const simple = simplifiedFilter(filter, this.modifiedRange);
    if (simple === undefined) return EMPTY;
    return (await this.positionalPage(simple, view, range)) ?? this.page(await this.organizationListing(simple, view), range);
  }

  async *allOrganizations(filter: OrganizationFilter, view: OrganizationView = {}): Batches {
    const simple = simplifiedFilter(filter, this.modifiedRange);
    if (simple !== undefined) yield* this.all(await this.organizationListing(simple, view));
  }

  async organization(id: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.organization, id);
  }

  async organizationIdByNativeId(nativeId: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.organizationIdByNativeId, nativeId);
  }

  private taxonomyListing(filter: TaxonomyFilter): Listing {
    const base = { jsonTable: 'taxonomies' as const, jsonColumn: 'json' as const };
    if (filter.search === undefined) return { ...base, from: 'taxonomies', where: [], params: [], order: 'position', position: 'position' };
    const text = textSearch('taxonomies_text', filter.search);
    return {
      ...base,
      from: 'taxonomies_text',
      where: [text.where],
      params: [text.param],
      order: 'taxonomies_text.rowid',
      ranking: text.ranking,
      rankingParams: text.rankingParams,
      position: 'taxonomies_text.rowid',
    };
  }

  async taxonomies(filter: TaxonomyFilter, range: PositionRange): Promise<Page> {
    return this.page(this.taxonomyListing(filter), range);
  }

  allTaxonomies(filter: TaxonomyFilter): Batches {
    return this.all(this.taxonomyListing(filter));
  }

  async taxonomy(id: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.taxonomy, id);
  }

  /** Term lists are small (a taxonomy's size), so every filter is answered by one indexed query. */
  private termListing(filter: TaxonomyTermFilter): Listing | undefined {
    const where: string[] = [];
    const params: Listing['params'] = [];
    if (filter.taxonomyId !== undefined) {
      const taxonomy = this.taxonomyRows.find((row) => row.id === filter.taxonomyId);
      if (taxonomy === undefined) return undefined;
      where.push('t.taxonomy_position = ?');
      params.push(taxonomy.position);
    }
    if (filter.parentId !== undefined) {
      const parent = this.statements.termById.get(filter.parentId) as { position: number } | undefined;
      if (parent === undefined) return undefined;
      where.push('t.parent_position = ?');
      params.push(parent.position);
    }
    if (filter.topOnly === true) where.push('t.parent_position IS NULL');
    const base = { jsonTable: 'taxonomy_terms' as const, jsonColumn: 'json' as const };
    if (filter.search === undefined) return { ...base, from: 'taxonomy_terms t', where, params, order: 't.position', position: 't.position' };
    const text = textSearch('taxonomy_terms_text', filter.search);
    return {
      ...base,
      from: 'taxonomy_terms_text JOIN taxonomy_terms t ON t.position = taxonomy_terms_text.rowid',
      where: [text.where, ...where],
      params: [text.param, ...params],
      order: 't.position',
      ranking: text.ranking,
      rankingParams: text.rankingParams,
      position: 't.position',
    };
  }

  async taxonomyTerms(filter: TaxonomyTermFilter, range: PositionRange): Promise<Page> {
    return this.page(this.termListing(filter), range);
  }

  allTaxonomyTerms(filter: TaxonomyTermFilter): Batches {
    return this.all(this.termListing(filter));
  }

  async taxonomyTerm(id: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.term, id);
  }

  async findTaxonomy(idOrCode: string): Promise<TaxonomyRef | undefined> {
    const row = findTaxonomyRow(this.taxonomyRows, idOrCode);
    return row === undefined ? undefined : { id: row.id, code: row.code };
  }

  async findTaxonomyTerm(idOrCode: string): Promise<TaxonomyTermRef | undefined> {
    return findTermRow(idOrCode, this.taxonomyRows, this.termLookups);
  }

  async taxonomyCodes(): Promise<string[]> {
    return this.taxonomyRows.map((row) => row.code);
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
