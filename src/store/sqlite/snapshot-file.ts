import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { DatasetKey } from './schema.ts';
import { servedInstant, STORE_FORMAT } from '../tables.ts';
import type { ModifiedRange } from '../filter-plan.ts';
import { Fragments } from '../packed-documents.ts';

/**
 * Opens a published snapshot to read. A snapshot never changes once published, and SQLite is told so
 * (`immutable=1`, as Datasette opens its immutable files): it then takes no file locks and never
 * checks whether another process changed the file, which took a 20-row page query from 28 to 18 µs.
 */
export function openSnapshot(path: string): DatabaseSync {
  const url = pathToFileURL(path);
  url.searchParams.set('immutable', '1');
  return new DatabaseSync(url, { readOnly: true });
}

/** What a snapshot says of itself (its `dataset` table), written at build; a key is missing in a snapshot of another format. */
export interface SnapshotMeta {
  format?: string;
  version?: string;
  publishedAt?: string;
  organizations?: number;
  taxonomyTerms?: number;
}

export function snapshotMeta(db: DatabaseSync): SnapshotMeta {
  const values = new Map((db.prepare('SELECT key, value FROM dataset').all() as { key: string; value: string }[]).map((row) => [row.key, row.value]));
  const count = (key: string) => (values.has(key) ? Number(values.get(key)) : undefined);
  return {
    format: values.get(DatasetKey.format),
    version: values.get(DatasetKey.version),
    publishedAt: values.get(DatasetKey.publishedAt),
    organizations: count(DatasetKey.organizations),
    taxonomyTerms: count(DatasetKey.taxonomyTerms),
  };
}

/** Why this version cannot serve a snapshot of another format; undefined for one of its own format. */
export function otherFormat(meta: SnapshotMeta): string | undefined {
  if (meta.format === String(STORE_FORMAT)) return undefined;
  return `is of snapshot format ${meta.format ?? 'unknown'}, not ${STORE_FORMAT} (published by another version): import the data again`;
}

/** The oldest and newest modification time of a snapshot's organizations, as served. */
export function modifiedRangeOf(db: DatabaseSync): ModifiedRange {
  const { oldest, newest } = db.prepare('SELECT min(modified_at) AS oldest, max(modified_at) AS newest FROM organizations').get() as { oldest: number | null; newest: number | null };
  return { oldest: oldest === null ? null : servedInstant(oldest), newest: newest === null ? null : servedInstant(newest) };
}

/** The fragments a snapshot's organizations are packed with (see packed-documents.ts). */
export function snapshotFragments(db: DatabaseSync): Fragments {
  const rows = db.prepare('SELECT position, text FROM document_fragments').all() as { position: number; text: string }[];
  return new Fragments(rows.map((row) => [row.position, row.text] as const));
}
