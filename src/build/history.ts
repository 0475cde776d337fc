import type { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { documentCheck } from '../store/document-check.ts';
import { KEPT_VERSIONS, servedInstant, storedInstant } from '../store/tables.ts';
import type { PreviousVersions } from './previous-versions.ts';

/** What a build publishes, as its line of versions names it. */
export interface PublishedVersion {
  version: string;
  publishedAt: string;
  taxonomiesVersion: string;
}

/** What a build changes of the live dataset it follows. */
export interface ChangesFromPrevious {
  /** The live dataset's version. */
  since: string;
  /** Organizations added or changed. */
  changed: number;
  /** Organizations removed (or unpublished). */
  removed: number;
  /** Versions the line no longer holds because of them (see dropVersionsBeyondBound), besides those beyond KEPT_VERSIONS. */
  versionsDropped: number;
}

/**
 * When a build is published: now, or just after the live dataset if the clock says otherwise (a clock
 * set back, two publishes within a millisecond). The changes since a version are the organizations
 * modified after it, so every publish of a line must come later than the one before.
 */
export function publishTime(now: Date, previous: PreviousVersions): string {
  const at = now.toISOString();
  if (previous.publishedAt === undefined || at > previous.publishedAt) return at;
  return new Date(Date.parse(previous.publishedAt) + 1).toISOString();
}

/** The removals a line keeps however few organizations it serves (about 150 KB): see dropVersionsBeyondBound. */
export const REMOVALS_ALWAYS_KEPT = 1000;

/**
 * Drops the oldest versions of the line (before its removals are written) while the removals since
 * them would outnumber the organizations served now (or REMOVALS_ALWAYS_KEPT, if more). A client at
 * such a version would read more lines of the changes feed than the dataset holds: it is told to copy
 * the dataset afresh (410), which is then the shorter read, and the snapshot keeps nothing for it. So
 * after a publish that replaces 326,224 organizations with 4, the line starts again at that publish,
 * and its snapshot does not carry 326,224 removals (70 MB) for clients better served by 4 organizations.
 * Returns the publish time of the oldest version kept, and how many were dropped.
 */
function dropVersionsBeyondBound(db: DatabaseSync, removedNow: number): { oldest: string; dropped: number } {
  const { organizations } = db.prepare('SELECT count(*) AS organizations FROM main.organizations').get() as { organizations: number };
  const bound = Math.max(organizations, REMOVALS_ALWAYS_KEPT);
  const carriedSince = db.prepare('SELECT count(*) AS n FROM previous.removed_organizations WHERE removed_at > ?');
  // The versions before this one, newest first.
  const versions = db.prepare('SELECT sequence, published_at FROM dataset_versions ORDER BY sequence DESC').all().slice(1) as { sequence: number; published_at: string }[];
  const first = versions.findIndex((version) => removedNow + (carriedSince.get(version.published_at) as { n: number }).n > bound);
  if (first >= 0) db.prepare('DELETE FROM dataset_versions WHERE sequence <= ?').run(versions[first]!.sequence);
  const { oldest } = db.prepare('SELECT min(published_at) AS oldest FROM dataset_versions').get() as { oldest: string };
  return { oldest, dropped: first < 0 ? 0 : versions.length - first };
}

/**
 * Writes a build's history (see store/tables.ts), run once its organizations and indexes are written.
 * The live dataset's line of versions goes on with this one, the oldest dropped beyond KEPT_VERSIONS;
 * its removals are carried on while a kept version was published before them (one of an organization
 * served again too, for when it is removed again), and the organizations it held that this build does
 * not are added, removed at this publish; but versions whose clients would read more removals than
 * organizations are dropped first (dropVersionsBeyondBound). Organizations are told apart by id, as clients key them. A
 * live dataset without history (none, or of an older format) starts a new line. Returns what the
 * build changes of the live dataset, when it carries its line on.
 */
export function writeHistory(db: DatabaseSync, previous: PreviousVersions, current: PublishedVersion): ChangesFromPrevious | undefined {
  const carried = previous.hasHistory && previous.file !== undefined;
  if (carried) {
    const url = pathToFileURL(previous.file!);
    url.searchParams.set('mode', 'ro');
    url.searchParams.set('immutable', '1');
    db.prepare('ATTACH DATABASE ? AS previous').run(url.href);
  }
  try {
    if (carried) {
      db.prepare(
        `INSERT INTO dataset_versions (sequence, version, published_at, taxonomies_version)
         SELECT sequence, version, published_at, taxonomies_version FROM previous.dataset_versions ORDER BY sequence DESC LIMIT ?`,
      ).run(KEPT_VERSIONS - 1);
    }
    db.prepare(
      'INSERT INTO dataset_versions (sequence, version, published_at, taxonomies_version) SELECT coalesce(max(sequence), 0) + 1, ?, ?, ? FROM dataset_versions',
    ).run(current.version, current.publishedAt, current.taxonomiesVersion);
    if (!carried) return undefined;
    // EXCEPT reads both id indexes in order: 50 ms at 326,224 organizations, where a lookup per
    // previous organization took 490.
    const removedIds = 'SELECT id FROM previous.organizations EXCEPT SELECT id FROM main.organizations';
    const { removedNow } = db.prepare(`SELECT count(*) AS removedNow FROM (${removedIds})`).get() as { removedNow: number };
    const { oldest, dropped } = dropVersionsBeyondBound(db, removedNow);
    // Since when each was served, as the live dataset says, or (of an older format) as it takes it.
    const unknownSince = previous.addedAtUnknownSince;
    // An organization's times are `instant`s (or the ISO text of an older format), a removal's ISO text.
    const addedAt = (alias: string) => (unknownSince === undefined ? (alias === 'p' ? `served_instant(${alias}.added_at)` : `${alias}.added_at`) : '?2');
    const addedAtParams = unknownSince === undefined ? [] : [unknownSince];
    // Checked afresh: a live dataset of an older format has no checks, and the row is the one served now.
    db.function('document_check', { deterministic: true }, (json) => documentCheck(json as string));
    db.function('served_instant', { deterministic: true }, (value) => servedInstant(value as number | string));
    db.prepare(
      `INSERT INTO removed_organizations (id, added_at, removed_at, json, json_crc)
       SELECT r.id, ${addedAt('r')}, r.removed_at, r.json, document_check(r.json) FROM previous.removed_organizations r WHERE r.removed_at > ?1 ORDER BY r.position`,
    ).run(oldest, ...addedAtParams);
    // None when the line starts again at this publish (its only version).
    db.prepare(
      `INSERT INTO removed_organizations (id, added_at, removed_at, json, json_crc)
       SELECT id, added_at, removed_at, json, document_check(json) FROM (
         SELECT p.id AS id, ${addedAt('p')} AS added_at, ?1 AS removed_at, json_object('id', p.id, 'external_identifier', p.external_id, 'removed_at', ?1) AS json
         FROM previous.organizations p
         WHERE p.id IN (${removedIds}) AND ?1 > ?3 ORDER BY p.position
       )`,
    ).run(current.publishedAt, ...(unknownSince === undefined ? [null] : addedAtParams), oldest);
    return {
      since: (db.prepare('SELECT version FROM previous.dataset_versions ORDER BY sequence DESC LIMIT 1').get() as { version: string }).version,
      changed: (db.prepare('SELECT count(*) AS n FROM organizations WHERE modified_at = ?').get(storedInstant(current.publishedAt)) as { n: number }).n,
      removed: removedNow,
      versionsDropped: dropped,
    };
  } finally {
    if (carried) db.exec('DETACH DATABASE previous');
  }
}
