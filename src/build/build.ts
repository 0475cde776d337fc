import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { documentCheck } from '../store/document-check.ts';
import { renderServedTerm } from '../hsds/render.ts';
import type { RenderedTaxonomy, RenderedTerm } from '../hsds/render.ts';
import type { DatasetInput } from '../hsds/records.ts';
import { buildFilePragmas, CREATE_INDEXES, CREATE_TABLES, DatasetKey, pageSizeFor } from '../store/sqlite/schema.ts';
import { STORE_FORMAT } from '../store/tables.ts';
import { Diagnostics } from '../sources/files/diagnostics.ts';
import { counted } from '../text.ts';
import { syncPath } from './durable.ts';
import { publishTime, writeHistory } from './history.ts';
import type { ChangesFromPrevious } from './history.ts';
import { PreviousVersions } from './previous-versions.ts';
import { SearchIndexWriter } from './search-index.ts';
import { workersPay } from './render-organizations.ts';
import { stageInput, STAGING_TABLES } from './staging.ts';
import { OUTSIDE_TERMS, renderVocabulary } from './vocabulary.ts';
import { writeOrganizations } from './write-organizations.ts';

/** The input has errors (listed in `diagnostics`); nothing was written. */
export class InvalidDataset extends Error {
  readonly diagnostics: Diagnostics;

  constructor(diagnostics: Diagnostics) {
    super(`the input has ${counted(diagnostics.errors.length, 'error')}`);
    this.diagnostics = diagnostics;
  }
}

export type BuildStage = 'read' | 'write' | 'load';

export interface BuildResult {
  /**
   * Seconds of the build's stages: reading and checking the sources (parsing included: they are read
   * as they are staged), rendering and writing the organizations, building the indexes.
   */
  timings?: { read: number; write: number; index: number };
  version: string;
  publishedAt: string;
  organizations: number;
  unpublishedOrganizations: number;
  taxonomies: number;
  taxonomyTerms: number;
  /** What it changes of the live dataset it follows, when that one's line of versions goes on. */
  fromPrevious?: ChangesFromPrevious;
}

export interface BuildOptions {
  diagnostics?: Diagnostics;
  /** Called every few thousand organizations, per stage, and once at the end of each; `total` is known when writing. */
  onProgress?: (stage: BuildStage, organizations: number, total?: number) => void;
  now?: () => Date;
  /** Check everything, write nothing: the file at `target` is neither created nor touched. */
  dryRun?: boolean;
  /** Called once the input is read and checked, before anything is written: a throw stops the build. */
  beforeWriting?: (organizations: number) => void;
  /** What the live dataset knew, if any: organizations unchanged since it keep their `last_modified`. */
  previous?: PreviousVersions;
  /** Keep each item's searchable words in the snapshot too, for loading it into another backend. */
  keepSearchText?: boolean;
  /**
   * Render organizations, and build their search index, on worker threads (true) or not (false),
   * whatever their number; for tests. By default, where they pay (see workersPay).
   */
  useWorkers?: boolean;
}


/**
 * Builds a complete snapshot file at `target` (which must not exist yet), checking the input as it
 * goes. Unpublished organizations never enter it. On any error nothing is left at `target`.
 */
export async function buildSnapshot(input: DatasetInput, target: string, options: BuildOptions = {}): Promise<BuildResult> {
  mkdirSync(dirname(target), { recursive: true });
  rmSync(target, { force: true });
  // Not in defensive mode (node:sqlite's default), which ignores journal_mode = OFF.
  const db = new DatabaseSync(target, { defensive: false });
  const indexFile = `${target}.organization-index`;
  try {
    const result = await writeSnapshot(db, input, indexFile, options);
    db.close();
    // The build writes without journal or syncs, for speed; one fsync at the end makes the file durable.
    if (options.dryRun) rmSync(target, { force: true });
    else syncPath(target);
    return result;
  } catch (error) {
    if (db.isOpen) db.close();
    rmSync(target, { force: true });
    rmSync(indexFile, { force: true });
    throw error;
  }
}

async function writeSnapshot(db: DatabaseSync, input: DatasetInput, indexFile: string, options: BuildOptions): Promise<BuildResult> {
  const diagnostics = options.diagnostics ?? new Diagnostics();
  // A modest page cache: every read below is sequential, and memory must stay flat at any input size.
  db.exec(`${buildFilePragmas('main', 16_384)} PRAGMA temp_store = FILE;`);
  db.exec("ATTACH DATABASE '' AS staging");
  db.exec(STAGING_TABLES);
  const { taxonomies, termsByTaxonomy, termByKey } = renderVocabulary(input.taxonomies, input.terms, diagnostics);

  db.exec('BEGIN');
  const started = performance.now();
  const staged = await stageInput(db, input, termByKey, diagnostics, (read) => options.onProgress?.('read', read));
  const readDone = performance.now();
  if (diagnostics.hasErrors) throw new InvalidDataset(diagnostics);
  const counts = { unpublishedOrganizations: staged.unpublished, taxonomies: taxonomies.length, taxonomyTerms: termByKey.size };
  if (options.dryRun) {
    db.exec('ROLLBACK');
    return { version: '', publishedAt: '', organizations: staged.published, ...counts };
  }
  options.beforeWriting?.(staged.published);
  // Made once the number of organizations is known, which sets the page size (see pageSizeFor).
  db.exec(`PRAGMA main.page_size = ${pageSizeFor(staged.published)}; ${CREATE_TABLES}`);

  const hash = createHash('sha256');
  const previous = options.previous ?? PreviousVersions.none;
  const publishedAt = publishTime(options.now?.() ?? new Date(), previous);
  const useWorkers = options.useWorkers ?? workersPay(staged.published);
  // Transactions only batch writes here (there is no journal); one ends wherever a file is attached or read by another thread.
  db.exec('COMMIT');
  const searchIndex = new SearchIndexWriter(db, options.keepSearchText === true, useWorkers ? indexFile : undefined);
  db.exec('BEGIN');
  const taxonomiesHash = createHash('sha256');
  const { termPositions, taxonomyPositions, subtreesOf } = writeVocabulary(db, taxonomies, termsByTaxonomy, [hash, taxonomiesHash], searchIndex);
  let indexBuilt: Promise<void> | undefined;
  const published = await writeOrganizations(db, {
    input,
    termByKey,
    termPositions,
    taxonomyPositions,
    subtreesOf,
    previous,
    searchIndex,
    publishedAt,
    hash,
    onProgress: (written) => options.onProgress?.('write', written, staged.published),
    renderInWorker: useWorkers,
    // With workers, the search index is built on one while this thread writes memberships, facets and indexes.
    beforeMemberships: () => {
      db.exec('COMMIT');
      indexBuilt = searchIndex.finishOrganizations();
      // Not awaited until the other writes are done: a failure meanwhile is not unhandled.
      indexBuilt.catch(() => {});
      db.exec('BEGIN');
    },
  });
  db.exec('COMMIT');
  const writeDone = performance.now();
  db.exec('DETACH DATABASE staging');
  searchIndex.finish();
  db.exec(CREATE_INDEXES);
  await indexBuilt;
  searchIndex.copyOrganizationIndex();
  const indexDone = performance.now();

  const version = hash.digest('hex').slice(0, 16);
  const fromPrevious = writeHistory(db, previous, { version, publishedAt, taxonomiesVersion: taxonomiesHash.digest('hex').slice(0, 16) });
  const setMeta = db.prepare('INSERT INTO dataset (key, value) VALUES (?, ?)');
  setMeta.run(DatasetKey.format, String(STORE_FORMAT));
  setMeta.run(DatasetKey.version, version);
  setMeta.run(DatasetKey.publishedAt, publishedAt);
  setMeta.run(DatasetKey.organizations, String(published));
  setMeta.run(DatasetKey.taxonomyTerms, String((db.prepare('SELECT count(*) AS n FROM taxonomy_terms').get() as { n: number }).n));
  const seconds = (from: number, to: number) => (to - from) / 1000;
  const timings = { read: seconds(started, readDone), write: seconds(readDone, writeDone), index: seconds(writeDone, indexDone) };
  return { version, publishedAt, organizations: published, ...counts, timings, ...(fromPrevious === undefined ? {} : { fromPrevious }) };
}

/**
 * The positions of each term and of its ancestors (the subtrees it is in), by term id, following
 * parents that are terms of the dataset.
 */
function subtreePositions(termsByTaxonomy: ReadonlyMap<string, readonly RenderedTerm[]>, termPositions: ReadonlyMap<string, number>): Map<string, number[]> {
  const parentOf = new Map<string, string>();
  for (const terms of termsByTaxonomy.values()) {
    for (const term of terms) {
      const parentId = term.object.parent_id as string | undefined;
      if (parentId !== undefined && termPositions.has(parentId)) parentOf.set(term.id, parentId);
    }
  }
  const subtrees = new Map<string, number[]>();
  for (const id of termPositions.keys()) {
    const positions: number[] = [];
    // The tree has no cycles (the vocabulary check refuses them); the bound only guards that.
    for (let at: string | undefined = id; at !== undefined && positions.length <= termPositions.size; at = parentOf.get(at)) positions.push(termPositions.get(at)!);
    subtrees.set(id, positions);
  }
  return subtrees;
}

/**
 * Taxonomies and terms in served order, with their search text, each served form added to every hash
 * given; returns their positions. Terms of no taxonomy of the dataset come last, under taxonomy
 * position 0.
 */
function writeVocabulary(
  db: DatabaseSync,
  taxonomies: readonly RenderedTaxonomy[],
  termsByTaxonomy: ReadonlyMap<string, readonly RenderedTerm[]>,
  hashes: readonly ReturnType<typeof createHash>[],
  searchIndex: SearchIndexWriter,
) {
  const hash = (text: string) => {
    for (const each of hashes) each.update(text).update('\n');
  };
  const insertTaxonomy = db.prepare('INSERT INTO taxonomies (position, id, code, term_count, json, json_crc) VALUES (?, ?, ?, ?, ?, ?)');
  const insertTerm = db.prepare(
    'INSERT INTO taxonomy_terms (position, id, code, taxonomy_position, position_in_taxonomy, parent_position, json, json_crc, detail_json, detail_json_crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const termPositions = new Map<string, number>();
  const taxonomyPositions = new Map<string, number>();
  const childrenCounts = new Map<string, number>();
  for (const code of [...taxonomies.map((taxonomy) => taxonomy.code), OUTSIDE_TERMS]) {
    for (const term of termsByTaxonomy.get(code)!) {
      termPositions.set(term.id, termPositions.size + 1);
      const parentId = term.object.parent_id as string | undefined;
      if (parentId !== undefined) childrenCounts.set(parentId, (childrenCounts.get(parentId) ?? 0) + 1);
    }
  }
  const writeTerms = (terms: readonly RenderedTerm[], taxonomyPosition: number) => {
    terms.forEach((term, termIndex) => {
      const served = renderServedTerm(term, childrenCounts.get(term.id) ?? 0);
      hash(served.detailJson);
      const position = termPositions.get(term.id)!;
      const parentId = term.object.parent_id as string | undefined;
      // A parent that is not in the input has no position.
      const parentPosition = parentId === undefined ? null : (termPositions.get(parentId) ?? null);
      insertTerm.run(position, term.id, term.code, taxonomyPosition, termIndex + 1, parentPosition, served.listJson, documentCheck(served.listJson), served.detailJson, documentCheck(served.detailJson));
      searchIndex.write('taxonomy_terms', position, [term.code, term.name], term.object.description as string);
    });
  };
  taxonomies.forEach((taxonomy, index) => {
    const terms = termsByTaxonomy.get(taxonomy.code)!;
    const json = JSON.stringify(taxonomy.object);
    hash(json);
    taxonomyPositions.set(taxonomy.code, index + 1);
    insertTaxonomy.run(index + 1, taxonomy.id, taxonomy.code, terms.length, json, documentCheck(json));
    searchIndex.write('taxonomies', index + 1, [taxonomy.code, taxonomy.object.name as string], taxonomy.object.description as string);
    writeTerms(terms, index + 1);
  });
  writeTerms(termsByTaxonomy.get(OUTSIDE_TERMS)!, 0);
  return { termPositions, taxonomyPositions, subtreesOf: subtreePositions(termsByTaxonomy, termPositions) };
}
