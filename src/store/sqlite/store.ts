import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { HISTORY_COLUMNS } from '../tables.ts';
import { modifiedRangeOf, openSnapshot, otherFormat, snapshotFragments, snapshotMeta } from './snapshot-file.ts';
import type { SnapshotMeta } from './snapshot-file.ts';
import { ListingRunner, SQL, organizationTextQuery, prepareRowsAsArrays, textSearch } from './listing.ts';
import { AlteredDocument, verifiedColumns, verifiedRow } from '../document-check.ts';
import type { Fragments } from '../packed-documents.ts';
import type { Listing } from './listing.ts';
import { isSearchAlone, membershipConditions } from '../filter-plan.ts';
import { singleToken } from '../search-query.ts';
import type { SearchCategories } from '../search-categories.ts';
import type { SearchQuery } from '../search-query.ts';
import type { Candidate } from '../search-ranking.ts';
import { Vocabulary } from '../search-vocabulary.ts';
import { facetLabels } from '../facets.ts';
import type { FacetCount, FacetLabels } from '../facets.ts';
import type { VocabularyEntry } from '../search-vocabulary.ts';
import type { Membership, ModifiedRange, TaxonomyRow, TermLookups, TermRow } from '../filter-plan.ts';
import { ListingStore, isDocument } from '../listing-store.ts';
import type { ItemKind, ListingBackend, TermConditions } from '../listing-store.ts';
import { StoreUnavailable } from '../store.ts';
import type { Batches, DatasetInfo, DatasetVersion, OrganizationFilter, OrganizationView, Page, PositionRange, SearchWords } from '../store.ts';

/** SQLite's result codes for a file that is not what it was: SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_NOTADB. */
const DAMAGE_CODES = new Set([10, 11, 26]);

/** The SQL of one read-only SQLite snapshot file (see schema.ts). */
class SqliteBackend implements ListingBackend<SQLInputValue> {
  private readonly file: string;
  /** Set when a read found the file damaged after it was opened; every later read is refused. */
  damage: string | undefined;
  private readonly db: DatabaseSync;
  readonly info: DatasetInfo;
  readonly taxonomies: TaxonomyRow[];
  readonly modifiedRange: ModifiedRange;
  readonly history: DatasetVersion[];
  readonly terms: TermLookups;
  readonly vocabulary: Vocabulary;
  readonly facetLabels: FacetLabels;
  private readonly listings: ListingRunner;
  private readonly fragments: Fragments;
  private readonly itemStatements: Record<ItemKind, StatementSync>;

  constructor(file: string) {
    this.file = file;
    this.db = openSnapshot(file);
    let meta: SnapshotMeta;
    try {
      meta = snapshotMeta(this.db);
    } catch (error) {
      this.db.close();
      throw error;
    }
    const problem = otherFormat(meta);
    if (problem !== undefined) {
      this.db.close();
      throw new Error(`${file} ${problem}`);
    }
    this.taxonomies = this.db.prepare('SELECT position, id, code FROM taxonomies ORDER BY position').all() as unknown as TaxonomyRow[];
    this.info = {
      version: meta.version!,
      publishedAt: meta.publishedAt!,
      organizations: meta.organizations!,
      taxonomies: this.taxonomies.length,
      taxonomyTerms: meta.taxonomyTerms!,
    };
    this.fragments = snapshotFragments(this.db);
    this.listings = new ListingRunner(this.db, this.fragments);
    this.facetLabels = facetLabels(
      this.db.prepare('SELECT position, id, code, taxonomy_position, json FROM taxonomy_terms').all() as unknown as { position: number; id: string; code: string; taxonomy_position: number; json: string }[],
      this.db.prepare('SELECT position, value FROM tax_statuses').all() as unknown as { position: number; value: string }[],
    );
    this.vocabulary = new Vocabulary(this.db.prepare('SELECT word, token, organizations FROM search_vocabulary ORDER BY word').all() as unknown as VocabularyEntry[]);
    this.modifiedRange = modifiedRangeOf(this.db);
    this.history = this.db.prepare(`SELECT ${HISTORY_COLUMNS} FROM dataset_versions ORDER BY sequence`).all() as unknown as DatasetVersion[];
    // Rows as arrays: see prepareRowsAsArrays.
    this.itemStatements = Object.fromEntries(Object.entries(SQL.items).map(([kind, sql]) => [kind, prepareRowsAsArrays(this.db, sql)])) as Record<ItemKind, StatementSync>;
    const lookups = SQL.termLookups;
    const termById = this.db.prepare(lookups.byId);
    const termByCode = this.db.prepare(lookups.byCode);
    const termByCodeAnyCase = this.db.prepare(lookups.byCodeAnyCase);
    this.terms = {
      byId: async (id) => this.read(() => termById.get(id) as TermRow | undefined),
      byCode: async (taxonomy, code) => this.read(() => termByCode.get(taxonomy, code) as TermRow | undefined),
      byCodeAnyCase: async (taxonomy, code) => this.read(() => termByCodeAnyCase.get(taxonomy, code) as TermRow | undefined),
    };
  }

  /** Terms' sizes as ranking asks for them (see termSize): a snapshot has about a thousand terms. */
  private readonly termSizes = new Map<number, number>();

  termSize(term: number): number {
    let size = this.termSizes.get(term);
    if (size === undefined) {
      size = this.read(() => this.listLength({ table: 'organization_terms', group: 'term', key: term }));
      this.termSizes.set(term, size);
    }
    return size;
  }

  /** How many organizations a membership list holds (its last position in it). */
  private listLength({ table, group, key }: Membership): number {
    return (this.listings.arrayStatement(`SELECT max(position_in_${group}) AS n FROM ${table} WHERE ${group}_position = ?`).get(key) as unknown as [number | null])[0] ?? 0;
  }

  /**
   * Runs a read. The file was verified whole when it was opened; if a read finds it damaged since (a
   * failing disk, a file changed in place), the request gets a 503 rather than a 500 or a wrong
   * answer, and the store reports itself not ready (see live.ts).
   */
  private read<T>(step: () => T): T {
    if (this.damage !== undefined) throw new StoreUnavailable(this.damage);
    try {
      return step();
    } catch (error) {
      throw this.damageOf(error);
    }
  }

  /** A StoreUnavailable when the error says the file is damaged (and the damage noted), else the error. */
  private damageOf(error: unknown): unknown {
    const { code, errcode } = error as { code?: string; errcode?: number };
    const damaged = error instanceof AlteredDocument || (code === 'ERR_SQLITE_ERROR' && errcode !== undefined && DAMAGE_CODES.has(errcode & 0xff));
    if (!damaged) return error;
    this.damage = `snapshot ${this.file} is damaged: ${(error as Error).message}`;
    return new StoreUnavailable(this.damage, { cause: error });
  }

  async count(listing: Listing): Promise<number> {
    return this.read(() => this.listings.count(listing));
  }

  async items(listing: Listing, offset: number, limit: number, ranked: boolean): Promise<string[]> {
    return this.read(() => this.listings.items(listing, offset, limit, ranked));
  }

  async facetCounts(listing: Listing | undefined, facets: readonly number[]): Promise<FacetCount[]> {
    return this.read(() => this.listings.facetCounts(listing, facets));
  }

  /** The text index returns matches in rowid (rank) order however many there are. */
  async candidates(listing: Listing, limit: number): Promise<Candidate[]> {
    return this.read(() => this.listings.candidates(listing, limit));
  }

  async jsonOf(listing: Listing, positions: readonly number[]): Promise<string[]> {
    return this.read(() => this.listings.jsonOf(listing, positions));
  }

  async *all(listing: Listing, ranked: boolean): Batches {
    const batches = this.read(() => this.listings.all(listing, ranked))[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<string[]>;
        try {
          next = await batches.next();
        } catch (error) {
          throw this.damageOf(error);
        }
        if (next.done === true) return;
        yield next.value;
      }
    } finally {
      await batches.return?.(undefined);
    }
  }

  async organizationsByPosition(membership: Membership | undefined, view: OrganizationView, range: PositionRange): Promise<Page> {
    return this.read(() => this.pageByPosition(membership, view, range));
  }

  private pageByPosition(membership: Membership | undefined, view: OrganizationView, range: PositionRange): Page {
    const end = range.first + range.count;
    const rows = this.listings.arrayStatement(SQL.pageByPosition(membership, view));
    const table = SQL.organizationJson(view).jsonTable;
    if (membership === undefined) {
      const total = this.info.organizations;
      return { total, items: range.first > total ? [] : verifiedColumns(rows.all(range.first, end), table, this.fragments) };
    }
    const total = this.listLength(membership);
    return { total, items: range.first > total ? [] : verifiedColumns(rows.all(membership.key, range.first, end), table, this.fragments) };
  }

  organizationListing(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView, query?: SearchQuery): Listing {
    if (query === undefined) return SQL.organizationListing(filter, memberships, view);
    const base = SQL.organizationJson(view);
    const modified = SQL.modifiedSince(filter);
    const members = membershipConditions<SQLInputValue>(memberships, 's.position');
    const token = singleToken(query);
    const textQuery = organizationTextQuery(query);
    const modifiedJoin = filter.modifiedSince === undefined ? '' : ' JOIN organizations o ON o.position = s.position';
    return {
      ...base,
      from: `organizations_text JOIN organization_search s ON s.rank = organizations_text.rowid${modifiedJoin}`,
      where: ['organizations_text MATCH ?', ...members.where, ...modified.where],
      params: [textQuery, ...members.params, ...modified.params],
      order: 'organizations_text.rowid',
      position: 's.position',
      candidates: { rank: 'organizations_text.rowid', names: 's.names' },
      // Searched alone, the text index counts its matches without the join (a tenth of the time).
      length: !isSearchAlone(filter, memberships)
        ? undefined
        : token !== undefined
          ? { sql: 'SELECT organizations AS n FROM organization_word_counts WHERE word = ?', params: [token] }
          : { sql: 'SELECT count(*) AS n FROM organizations_text WHERE organizations_text MATCH ?', params: [textQuery] },
    };
  }

  taxonomyListing(search: SearchWords | undefined): Listing {
    return SQL.taxonomyListing(search === undefined ? undefined : textSearch('taxonomies_text', search));
  }

  async categoryMembers(filter: OrganizationFilter, memberships: readonly Membership[], categories: SearchCategories): Promise<number[]> {
    const { sql, params } = SQL.categoryMembers(filter, memberships, categories);
    return this.read(() => JSON.parse((this.listings.arrayStatement(sql).get(...params) as unknown as [string])[0]) as number[]);
  }

  positionsListing(view: OrganizationView, positions: readonly number[]): Listing {
    return SQL.positionsListing(view, positions);
  }

  removedListing(since: string): Listing {
    return SQL.removedListing(since);
  }

  termListing(conditions: TermConditions<SQLInputValue>, search: SearchWords | undefined): Listing {
    return SQL.termListing(conditions, search === undefined ? undefined : textSearch('taxonomy_terms_text', search));
  }

  async item(kind: ItemKind, key: string): Promise<string | undefined> {
    return this.read(() => {
      const row = this.itemStatements[kind].get(key) as unknown as [string, number?, string?, number?] | undefined;
      if (row === undefined || !isDocument(kind)) return row?.[0];
      return verifiedRow(this.fragments, `the ${kind} ${key}`, row[0], row[1]!, row[2], row[3]);
    });
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}

/** The embedded default backend: one read-only SQLite snapshot file (see schema.ts). */
export class SqliteStore extends ListingStore<SQLInputValue> {
  private readonly sqlite: SqliteBackend;

  constructor(file: string) {
    const backend = new SqliteBackend(file);
    super(backend);
    this.sqlite = backend;
  }

  /** Why the file can no longer be read, once a read has found it damaged. */
  get damage(): string | undefined {
    return this.sqlite.damage;
  }
}
