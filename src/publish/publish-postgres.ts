import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DatasetInput } from '../hsds/records.ts';
import { createIndexes, createTables, fillListLengths, generationSchema, POSTINGS_TABLE } from '../store/postgres/generation-schema.ts';
import { ADDED_AT_SINCE_FORMAT, columnNames, HISTORY_SINCE_FORMAT, SEARCHED_LISTS, servedInstant, STORE_FORMAT, tableNames } from '../store/tables.ts';
import type { TableName } from '../store/tables.ts';
import { postingRows } from '../store/postgres/postings.ts';
import { migrate, pendingMigrations } from '../store/postgres/migrate.ts';
import { PUBLISH_CHANNEL } from '../store/postgres/live.ts';
import { modifiedRangeOf, openSnapshot, snapshotMeta } from '../store/sqlite/snapshot-file.ts';
import { buildSnapshot } from '../build/build.ts';
import type { BuildOptions } from '../build/build.ts';
import { PreviousVersions } from '../build/previous-versions.ts';
import type { PreviousVersion, RemovedRow, VersionRow } from '../build/previous-versions.ts';
import { ImportBusy } from './import-lock.ts';
import type { PublishResult } from './publish.ts';

/** Where a publish goes when the dataset lives in PostgreSQL. */
export interface PostgresTarget {
  url: string;
  /** Apply pending migrations first (else a database that lacks them is an error). */
  migrate: boolean;
}

export class NotMigrated extends Error {}

/** Any fixed number, the same for every instance: held by the running publish. */
export const PUBLISH_LOCK = 0x4853_4453_02;
/** Organizations read per query from the live generation. */
const PREVIOUS_BATCH = 10_000;
/** Bytes of COPY text gathered before a write. */
const COPY_CHUNK = 256 * 1024;

/** The tables with a row per organization: their rows are the progress of the load. */
const ORGANIZATION_ROWS = new Set<TableName>(['organizations', 'organization_items', 'organization_documents']);

/** A value in COPY's text format. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value !== 'string') return String(value);
  return /[\\\n\r\t]/.test(value) ? value.replace(/[\\\n\r\t]/g, (character) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[character]!) : value;
}

async function* copyText(rows: Iterable<Record<string, unknown>>, onRow?: () => void): AsyncGenerator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += `${Object.values(row).map(copyField).join('\t')}\n`;
    onRow?.();
    if (chunk.length >= COPY_CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}

async function copyInto(client: pg.ClientBase, target: string, columns: string, rows: Iterable<Record<string, unknown>>, onRow?: () => void): Promise<void> {
  await pipeline(Readable.from(copyText(rows, onRow)), client.query(copyFrom(`COPY ${target} (${columns}) FROM STDIN WITH (FREEZE)`)));
}

/**
 * Rows of a text table (see generation-schema.ts): the line's other columns as they are, then its
 * title and all its words as tsvector literals, each word once, quoted as a lexeme. Words hold only
 * letters and digits, so quoting needs no escapes.
 */
function* wordVectors(lines: Iterable<{ title: string; body: string }>): Generator<Record<string, unknown>> {
  const literal = (words: Iterable<string>) => [...words].map((word) => `'${word}'`).join(' ');
  const wordsOf = (line: string) => (line === '' ? [] : line.split(' '));
  for (const { title, body, ...columns } of lines) {
    const titleWords = new Set(wordsOf(title));
    yield { ...columns, title: literal(titleWords), words: literal(new Set([...titleWords, ...wordsOf(body)])) };
  }
}

/** The columns of a text table before its two word columns, as the snapshot gives them. */
const TEXT_LINES: Record<string, { columns: string; select: string }> = {
  organizations: {
    columns: 'position, organization_position, names',
    select: 'SELECT t.position, s.position AS organization_position, s.names, t.title, t.body FROM organizations_search_text t JOIN organization_search s ON s.rank = t.position',
  },
};

/** The live generation, if any: its id and what it holds. */
async function liveGeneration(client: pg.ClientBase) {
  const rows = await client.query<{ generation: string | null; version: string | null; published_at: string | null; format: number | null }>(
    'SELECT l.generation, g.version, g.published_at, g.format FROM hsds.live l LEFT JOIN hsds.generations g ON g.id = l.generation',
  );
  return rows.rows[0]!;
}

/** `added_at`, where a generation of this format has it (see ADDED_AT_SINCE_FORMAT). */
const addedAtOf = (format: number): string => (format >= ADDED_AT_SINCE_FORMAT ? 'added_at' : 'NULL AS added_at');

async function* previousOrganizations(client: pg.ClientBase, schema: string, format: number): AsyncGenerator<PreviousVersion> {
  for (let after = ''; ; ) {
    // Times as served: from a bigint (as pg gives it, a string of digits) or an older format's ISO text.
    const { rows } = await client.query<{ id: string; external_id: string; content_hash: string; modified_at: string; added_at: string | null }>(
      `SELECT id, external_id, content_hash, modified_at, ${addedAtOf(format)} FROM ${schema}.organizations WHERE external_id > $1 ORDER BY external_id LIMIT ${PREVIOUS_BATCH}`,
      [after],
    );
    for (const row of rows) {
      yield { id: row.id, externalId: row.external_id, contentHash: row.content_hash, modifiedAt: servedInstant(row.modified_at), addedAt: row.added_at === null ? undefined : servedInstant(row.added_at) };
    }
    if (rows.length < PREVIOUS_BATCH) return;
    after = rows.at(-1)!.external_id;
  }
}

/** The live generation as the next build needs it (see PreviousVersions), in a scratch file at `file`. */
async function previousVersions(client: pg.ClientBase, schema: string, format: number, file: string): Promise<PreviousVersions> {
  const versions = await client.query<VersionRow>(`SELECT sequence, version, published_at, taxonomies_version FROM ${schema}.dataset_versions ORDER BY sequence`);
  const removed = await client.query<RemovedRow>(`SELECT id, ${addedAtOf(format)}, removed_at, json FROM ${schema}.removed_organizations ORDER BY position`);
  return PreviousVersions.fromRows({ organizations: previousOrganizations(client, schema, format), versions: versions.rows, removed: removed.rows }, file);
}

/** Makes sure the control tables are there (migrating when asked to). */
export async function ensureMigrated(client: pg.ClientBase, apply: boolean): Promise<void> {
  if (apply) {
    await migrate(client);
    return;
  }
  const pending = await pendingMigrations(client);
  if (pending.length > 0) {
    throw new NotMigrated(`the database lacks migration ${pending.map((migration) => migration.name).join(', ')}: run \`hsds-org-api migrate\` first, or pass --migrate`);
  }
}

/**
 * Publishes to PostgreSQL: the dataset is built and checked as a SQLite snapshot (the same build as
 * the embedded backend, so both serve the same bytes), then loaded into a new generation schema and
 * made live, all in one transaction: readers see the old generation or the new one, never a part,
 * and a failed or killed publish leaves nothing behind. Servers learn of it by NOTIFY.
 */
export async function publishToPostgres(
  input: DatasetInput | (() => Promise<DatasetInput>),
  target: PostgresTarget,
  options: Omit<BuildOptions, 'dryRun' | 'previous' | 'keepSearchText'> = {},
): Promise<PublishResult> {
  const client = new pg.Client({ connectionString: target.url, application_name: 'hsds-org-api import' });
  await client.connect();
  client.on('error', () => {}); // a lost connection fails the query under way, which reports it
  const scratch = mkdtempSync(join(tmpdir(), 'hsds-org-api-publish-'));
  try {
    await ensureMigrated(client, target.migrate);
    const locked = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [PUBLISH_LOCK])).rows[0]!.locked;
    if (!locked) throw new ImportBusy('another import is publishing to this database; try again when it has finished');
    const live = await liveGeneration(client);
    const previous =
      live.generation !== null && live.format !== null && live.format >= HISTORY_SINCE_FORMAT && live.format <= STORE_FORMAT
        ? await previousVersions(client, generationSchema(live.generation), live.format, join(scratch, 'previous.sqlite'))
        : PreviousVersions.none;
    const snapshot = join(scratch, 'snapshot.sqlite');
    let result;
    try {
      result = await buildSnapshot(typeof input === 'function' ? await input() : input, snapshot, { ...options, previous, keepSearchText: true });
    } finally {
      previous.close();
    }
    if (live.generation !== null && live.version === result.version && live.format === STORE_FORMAT) {
      return { ...result, version: live.version, publishedAt: live.published_at!, changed: false, snapshot: `PostgreSQL ${generationSchema(live.generation)}` };
    }
    const generation = await loadGeneration(client, snapshot, result, options);
    await dropOldGenerations(client);
    return { ...result, changed: true, snapshot: `PostgreSQL ${generationSchema(generation)}` };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await client.end().catch(() => {});
  }
}

async function loadGeneration(client: pg.ClientBase, snapshotFile: string, result: { version: string; publishedAt: string; taxonomies: number }, options: Pick<BuildOptions, 'onProgress'>): Promise<number> {
  const snapshot = openSnapshot(snapshotFile);
  try {
    const meta = snapshotMeta(snapshot);
    const modified = modifiedRangeOf(snapshot);
    const organizations = meta.organizations!;
    await client.query('BEGIN');
    try {
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO hsds.generations (format, version, published_at, organizations, taxonomies, taxonomy_terms, oldest_modified, newest_modified)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [STORE_FORMAT, result.version, result.publishedAt, organizations, result.taxonomies, meta.taxonomyTerms, modified.oldest, modified.newest],
      );
      const generation = Number(inserted.rows[0]!.id);
      const schema = generationSchema(generation);
      await client.query(createTables(schema));
      let loaded = 0;
      const onOrganizationRow = () => {
        if (++loaded % 10_000 === 0) options.onProgress?.('load', loaded, organizations * 3);
      };
      for (const table of tableNames) {
        const names = columnNames(table).join(', ');
        const rows = snapshot.prepare(`SELECT ${names} FROM ${table}`).iterate() as Iterable<Record<string, unknown>>;
        await copyInto(client, `${schema}.${table}`, names, rows, ORGANIZATION_ROWS.has(table) ? onOrganizationRow : undefined);
      }
      for (const list of SEARCHED_LISTS) {
        const { columns, select } = TEXT_LINES[list] ?? { columns: 'position', select: `SELECT position, title, body FROM ${list}_search_text` };
        const lines = snapshot.prepare(select).iterate() as Iterable<{ title: string; body: string }>;
        await copyInto(client, `${schema}.${list}_text`, `${columns}, title, words`, wordVectors(lines));
      }
      await copyInto(client, `${schema}.${POSTINGS_TABLE}`, 'token, organizations, postings', postingRows(snapshot));
      options.onProgress?.('load', organizations * 3, organizations * 3);
      await client.query(fillListLengths(schema));
      await client.query(createIndexes(schema));
      await client.query(`ANALYZE ${[...tableNames, ...SEARCHED_LISTS.map((list) => `${list}_text`), POSTINGS_TABLE].map((table) => `${schema}.${table}`).join(', ')}`);
      await client.query('UPDATE hsds.live SET previous = generation, generation = $1', [generation]);
      await client.query('SELECT pg_notify($1, $2)', [PUBLISH_CHANNEL, String(generation)]);
      await client.query('COMMIT');
      return generation;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    snapshot.close();
  }
}

/** Generations neither live nor previous are dropped: no server reads them any more. */
async function dropOldGenerations(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ id: string }>(
    'SELECT g.id FROM hsds.generations g, hsds.live l WHERE g.id IS DISTINCT FROM l.generation AND g.id IS DISTINCT FROM l.previous',
  );
  for (const { id } of rows) {
    await client.query('BEGIN');
    await client.query(`DROP SCHEMA IF EXISTS ${generationSchema(id)} CASCADE`);
    await client.query('DELETE FROM hsds.generations WHERE id = $1', [id]);
    await client.query('COMMIT');
  }
}
