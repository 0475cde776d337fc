import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { organizationId } from '../hsds/ids.ts';
import { renderOrganization, renderTaxonomy, renderTerm, termDetailJson } from '../hsds/render.ts';
import type { RenderedTaxonomy, RenderedTerm } from '../hsds/render.ts';
import type { DatasetInput, OrganizationRecord, TaxonomyRecord, TaxonomyTermRecord } from '../hsds/records.ts';
import { CREATE_INDEXES, CREATE_TABLES, DatasetKey, SNAPSHOT_FORMAT } from '../store/sqlite-schema.ts';

export class BuildError extends Error {}

export type BuildStage = 'read' | 'write';

export interface BuildResult {
  version: string;
  publishedAt: string;
  organizations: number;
  unpublishedOrganizations: number;
  taxonomies: number;
  taxonomyTerms: number;
}

export interface BuildOptions {
  /** Called every few thousand organizations, per stage ('read', then 'write'), and once at the end of each. */
  onProgress?: (stage: BuildStage, organizations: number) => void;
  now?: () => Date;
}

const PROGRESS_EVERY = 10_000;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

/** Organizations are served by name (case-insensitive, by code point), then by native id. */
const organizationSortKey = (name: string): string => name.normalize('NFKC').toLowerCase();

const termKey = (taxonomy: string, code: string): string => `${taxonomy}\u0000${code}`;

function checkTermTree(terms: readonly TaxonomyTermRecord[]): void {
  const byKey = new Map<string, TaxonomyTermRecord>();
  for (const term of terms) {
    const key = termKey(term.taxonomy, term.code);
    if (byKey.has(key)) throw new BuildError(`taxonomy term ${term.taxonomy}:${term.code} is defined twice`);
    byKey.set(key, term);
  }
  for (const term of terms) {
    const seen = new Set<string>();
    for (let current: TaxonomyTermRecord | undefined = term; current?.parentCode !== undefined; ) {
      const parentKey = termKey(current.taxonomy, current.parentCode);
      const parent = byKey.get(parentKey);
      if (parent === undefined) {
        throw new BuildError(`taxonomy term ${current.taxonomy}:${current.code} names parent ${current.parentCode}, which does not exist`);
      }
      if (seen.has(parentKey) || parent === term) throw new BuildError(`taxonomy term ${term.taxonomy}:${term.code} is in a parent cycle`);
      seen.add(parentKey);
      current = parent;
    }
  }
}

function renderTaxonomies(taxonomies: readonly TaxonomyRecord[], terms: readonly TaxonomyTermRecord[]) {
  const sorted = [...taxonomies].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  const byCode = new Map<string, RenderedTaxonomy>();
  // Codes are matched case-insensitively in requests, so they must be unique that way.
  const lowerCaseCodes = new Set<string>();
  for (const taxonomy of sorted) {
    const lowerCaseCode = taxonomy.code.toLowerCase();
    if (lowerCaseCodes.has(lowerCaseCode)) throw new BuildError(`taxonomy ${taxonomy.code} is defined twice (codes are case-insensitive)`);
    lowerCaseCodes.add(lowerCaseCode);
    byCode.set(taxonomy.code, renderTaxonomy(taxonomy));
  }
  checkTermTree(terms);
  const termsByTaxonomy = new Map<string, RenderedTerm[]>(sorted.map((taxonomy) => [taxonomy.code, []]));
  for (const term of terms) {
    const taxonomy = byCode.get(term.taxonomy);
    if (taxonomy === undefined) throw new BuildError(`taxonomy term ${term.code} names taxonomy ${term.taxonomy}, which does not exist`);
    termsByTaxonomy.get(term.taxonomy)!.push(renderTerm(term, taxonomy));
  }
  return { taxonomies: [...byCode.values()], termsByTaxonomy };
}

/**
 * Builds a complete snapshot file aside and moves it to `target` in one rename: a reader sees either
 * no file, or the previous one, or the finished new one. Unpublished organizations never enter it.
 */
export async function buildSnapshot(input: DatasetInput, target: string, options: BuildOptions = {}): Promise<BuildResult> {
  mkdirSync(dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.building`;
  rmSync(temporary, { force: true });
  const db = new DatabaseSync(temporary);
  try {
    const result = await writeSnapshot(db, input, options);
    db.close();
    renameSync(temporary, target);
    return result;
  } catch (error) {
    if (db.isOpen) db.close();
    rmSync(temporary, { force: true });
    throw error;
  }
}

async function writeSnapshot(db: DatabaseSync, input: DatasetInput, options: BuildOptions): Promise<BuildResult> {
  db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -65536;');
  db.exec(CREATE_TABLES);
  db.exec("ATTACH DATABASE '' AS staging");
  db.exec('CREATE TABLE staging.organizations (external_id TEXT PRIMARY KEY, sort_key TEXT NOT NULL, published INTEGER NOT NULL, record TEXT NOT NULL)');
  const hash = createHash('sha256');
  const { taxonomies, termsByTaxonomy } = renderTaxonomies(input.taxonomies, input.terms);
  const termByKey = new Map<string, RenderedTerm>();

  db.exec('BEGIN');
  const insertTaxonomy = db.prepare('INSERT INTO taxonomies (position, id, code, term_count, json) VALUES (?, ?, ?, ?, ?)');
  const insertTerm = db.prepare(
    'INSERT INTO taxonomy_terms (position, id, taxonomy_position, position_in_taxonomy, json, detail_json) VALUES (?, ?, ?, ?, ?, ?)',
  );
  let termPosition = 0;
  taxonomies.forEach((taxonomy, index) => {
    const terms = termsByTaxonomy.get(taxonomy.code)!;
    const json = JSON.stringify(taxonomy.object);
    hash.update(json).update('\n');
    insertTaxonomy.run(index + 1, taxonomy.id, taxonomy.code, terms.length, json);
    terms.forEach((term, termIndex) => {
      const termJson = JSON.stringify(term.object);
      const detailJson = termDetailJson(term);
      hash.update(detailJson).update('\n');
      insertTerm.run(++termPosition, term.id, index + 1, termIndex + 1, termJson, detailJson);
      termByKey.set(termKey(taxonomy.code, term.code), term);
    });
  });

  const stage = db.prepare('INSERT INTO staging.organizations (external_id, sort_key, published, record) VALUES (?, ?, ?, ?)');
  let read = 0;
  let unpublished = 0;
  for await (const organization of input.organizations) {
    for (const tag of organization.tags) {
      if (!termByKey.has(termKey(tag.taxonomy, tag.code))) {
        throw new BuildError(`organization ${organization.externalId} is tagged ${tag.taxonomy}:${tag.code}, which is not a known term`);
      }
    }
    const published = organization.status === 'published';
    if (!published) unpublished++;
    try {
      stage.run(organization.externalId, organizationSortKey(organization.name), published ? 1 : 0, JSON.stringify(organization));
    } catch (error) {
      // The staging primary key is the duplicate check: no separate lookup per row.
      if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_PRIMARYKEY) {
        throw new BuildError(`organization ${organization.externalId} is defined twice`);
      }
      throw error;
    }
    if (++read % PROGRESS_EVERY === 0) options.onProgress?.('read', read);
  }
  options.onProgress?.('read', read);

  db.exec('CREATE INDEX staging.organizations_order ON organizations (sort_key, external_id) WHERE published = 1');
  const isPublished = db.prepare('SELECT 1 FROM staging.organizations WHERE external_id = ? AND published = 1');
  const insertOrganization = db.prepare('INSERT INTO organizations (position, id, external_id, json, detail_json) VALUES (?, ?, ?, ?, ?)');
  const inServedOrder = db.prepare(
    'SELECT record FROM staging.organizations WHERE published = 1 ORDER BY sort_key, external_id',
  );
  let position = 0;
  for (const row of inServedOrder.iterate() as Iterable<{ record: string }>) {
    const organization = JSON.parse(row.record) as OrganizationRecord;
    const terms = uniqueTerms(organization, termByKey);
    const parent = organization.parentExternalId;
    const parentId = parent !== undefined && isPublished.get(parent) !== undefined ? organizationId(parent) : undefined;
    const rendered = renderOrganization(organization, terms, parentId);
    hash.update(rendered.detailJson).update('\n');
    insertOrganization.run(++position, rendered.id, organization.externalId, rendered.listJson, rendered.detailJson);
    if (position % PROGRESS_EVERY === 0) options.onProgress?.('write', position);
  }
  options.onProgress?.('write', position);
  db.exec('COMMIT');
  db.exec("DETACH DATABASE staging");
  db.exec(CREATE_INDEXES);

  const version = hash.digest('hex').slice(0, 16);
  const publishedAt = (options.now?.() ?? new Date()).toISOString();
  const setMeta = db.prepare('INSERT INTO dataset (key, value) VALUES (?, ?)');
  setMeta.run(DatasetKey.format, String(SNAPSHOT_FORMAT));
  setMeta.run(DatasetKey.version, version);
  setMeta.run(DatasetKey.publishedAt, publishedAt);
  return {
    version,
    publishedAt,
    organizations: position,
    unpublishedOrganizations: unpublished,
    taxonomies: taxonomies.length,
    taxonomyTerms: termPosition,
  };
}

function uniqueTerms(organization: OrganizationRecord, termByKey: ReadonlyMap<string, RenderedTerm>): RenderedTerm[] {
  const terms = new Map<string, RenderedTerm>();
  for (const tag of organization.tags) {
    const key = termKey(tag.taxonomy, tag.code);
    if (!terms.has(key)) terms.set(key, termByKey.get(key)!);
  }
  return [...terms.values()];
}
