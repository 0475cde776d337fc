import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import { DatasetKey, SNAPSHOT_FORMAT } from './sqlite-schema.ts';
import type { DatasetInfo, Page, PositionRange, Store, TaxonomyRef, TaxonomyTermFilter } from './store.ts';

interface JsonRow {
  json: string;
}

/** The embedded default backend: one read-only SQLite snapshot file (see sqlite-schema.ts). */
export class SqliteStore implements Store {
  private readonly db: DatabaseSync;
  private readonly datasetInfo: DatasetInfo;
  private readonly taxonomyRefs: (TaxonomyRef & { position: number; termCount: number })[];
  private readonly statements: {
    organizations: StatementSync;
    organization: StatementSync;
    organizationIdByNativeId: StatementSync;
    taxonomies: StatementSync;
    taxonomy: StatementSync;
    terms: StatementSync;
    termsOfTaxonomy: StatementSync;
    term: StatementSync;
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
    this.taxonomyRefs = (
      this.db.prepare("SELECT position, id, code, term_count FROM taxonomies ORDER BY position").all() as {
        position: number;
        id: string;
        code: string;
        term_count: number;
      }[]
    ).map((row) => ({ position: row.position, id: row.id, code: row.code, termCount: row.term_count }));
    const count = (table: string) => (this.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    this.datasetInfo = {
      version: meta.get(DatasetKey.version)!,
      publishedAt: meta.get(DatasetKey.publishedAt)!,
      organizations: count('organizations'),
      taxonomies: this.taxonomyRefs.length,
      taxonomyTerms: count('taxonomy_terms'),
    };
    this.statements = {
      organizations: this.db.prepare('SELECT json FROM organizations WHERE position >= ? AND position < ? ORDER BY position'),
      organization: this.db.prepare('SELECT detail_json AS json FROM organizations WHERE id = ?'),
      organizationIdByNativeId: this.db.prepare('SELECT id AS json FROM organizations WHERE external_id = ?'),
      taxonomies: this.db.prepare('SELECT json FROM taxonomies WHERE position >= ? AND position < ? ORDER BY position'),
      taxonomy: this.db.prepare('SELECT json FROM taxonomies WHERE id = ?'),
      terms: this.db.prepare('SELECT json FROM taxonomy_terms WHERE position >= ? AND position < ? ORDER BY position'),
      termsOfTaxonomy: this.db.prepare(
        'SELECT json FROM taxonomy_terms WHERE taxonomy_position = ? AND position_in_taxonomy >= ? AND position_in_taxonomy < ? ORDER BY position_in_taxonomy',
      ),
      term: this.db.prepare('SELECT detail_json AS json FROM taxonomy_terms WHERE id = ?'),
    };
  }

  private static page(total: number, statement: StatementSync, range: PositionRange, ...leading: number[]): Page {
    if (range.first > total) return { total, items: [] };
    const rows = statement.all(...leading, range.first, range.first + range.count) as unknown as JsonRow[];
    return { total, items: rows.map((row) => row.json) };
  }

  private static one(statement: StatementSync, id: string): string | undefined {
    return (statement.get(id) as JsonRow | undefined)?.json;
  }

  async info(): Promise<DatasetInfo> {
    return this.datasetInfo;
  }

  async organizations(range: PositionRange): Promise<Page> {
    return SqliteStore.page(this.datasetInfo.organizations, this.statements.organizations, range);
  }

  async organization(id: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.organization, id);
  }

  async organizationIdByNativeId(nativeId: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.organizationIdByNativeId, nativeId);
  }

  async taxonomies(range: PositionRange): Promise<Page> {
    return SqliteStore.page(this.datasetInfo.taxonomies, this.statements.taxonomies, range);
  }

  async taxonomy(id: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.taxonomy, id);
  }

  async taxonomyTerms(filter: TaxonomyTermFilter, range: PositionRange): Promise<Page> {
    if (filter.taxonomyId === undefined) return SqliteStore.page(this.datasetInfo.taxonomyTerms, this.statements.terms, range);
    const taxonomy = this.taxonomyRefs.find((ref) => ref.id === filter.taxonomyId);
    if (taxonomy === undefined) return { total: 0, items: [] };
    return SqliteStore.page(taxonomy.termCount, this.statements.termsOfTaxonomy, range, taxonomy.position);
  }

  async taxonomyTerm(id: string): Promise<string | undefined> {
    return SqliteStore.one(this.statements.term, id);
  }

  async findTaxonomy(idOrCode: string): Promise<TaxonomyRef | undefined> {
    const wanted = idOrCode.toLowerCase();
    const ref = this.taxonomyRefs.find((candidate) => candidate.id === wanted || candidate.code.toLowerCase() === wanted);
    return ref === undefined ? undefined : { id: ref.id, code: ref.code };
  }

  async taxonomyCodes(): Promise<string[]> {
    return this.taxonomyRefs.map((ref) => ref.code);
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
