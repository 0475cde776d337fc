import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import { documentCheck } from '../store/document-check.ts';
import { HISTORY_TABLES, ORGANIZATIONS_TABLE_SINCE_FORMAT } from '../store/sqlite/schema.ts';
import { ADDED_AT_SINCE_FORMAT, HISTORY_SINCE_FORMAT, servedInstant, STORE_FORMAT, storedInstant } from '../store/tables.ts';
import { openSnapshot, snapshotMeta } from '../store/sqlite/snapshot-file.ts';

/** What the live dataset knew of one organization. */
export interface PreviousVersion {
  id: string;
  externalId: string;
  contentHash: string;
  modifiedAt: string;
  /** Undefined from a live dataset of a format without it (see ADDED_AT_SINCE_FORMAT). */
  addedAt: string | undefined;
}

/** What an organization of a new build carries on from the live dataset (undefined: this publish's time). */
export interface CarriedTimes {
  /** Its `last_modified`, when its served document is unchanged. */
  modifiedAt: string | undefined;
  /** Since when the line has served it without a break, when the live dataset serves it too. */
  addedAt: string | undefined;
}

/** A row of `dataset_versions` (see store/tables.ts). */
export interface VersionRow {
  sequence: number;
  version: string;
  published_at: string;
  taxonomies_version: string;
}

/** A row of `removed_organizations`. */
export interface RemovedRow {
  id: string;
  /** Null from a live dataset of a format without it. */
  added_at: string | null;
  removed_at: string;
  json: string;
}

/** The live dataset read from elsewhere (another backend), for PreviousVersions.fromRows. */
export interface PreviousRows {
  organizations: AsyncIterable<PreviousVersion>;
  /** By sequence: the live dataset's own version last. */
  versions: readonly VersionRow[];
  removed: readonly RemovedRow[];
}

/**
 * What the live dataset knew, for the build that follows it:
 * - of each organization, so a new build can tell which organizations changed. An organization whose
 *   served document is unchanged keeps its `last_modified`; any other (new or changed) gets the new
 *   publish time. Without a readable live dataset of the same format, every organization counts as new.
 * - its line of versions and the organizations they removed (history.ts carries them on), when it is
 *   of a format that has them.
 */
export class PreviousVersions {
  private readonly db: DatabaseSync | undefined;
  private readonly lookup: StatementSync | undefined;
  private readonly removeFile: (() => void) | undefined;
  /** A SQLite file with the live dataset's `organizations` and, when `hasHistory`, its history tables. */
  readonly file: string | undefined;
  readonly hasHistory: boolean;
  /**
   * Since when an organization of the live dataset (or one of its removals) was served when that
   * dataset does not say: its line's oldest version (see ADDED_AT_SINCE_FORMAT). Undefined when the
   * file's `added_at` columns say, and without history.
   */
  readonly addedAtUnknownSince: string | undefined;
  /** When the live dataset was published. */
  readonly publishedAt: string | undefined;

  private constructor(source?: { db: DatabaseSync; file: string; hasHistory: boolean; hasAddedAt: boolean; publishedAt: string | undefined; removeFile?: () => void }) {
    this.db = source?.db;
    const hasAddedAt = source?.hasAddedAt === true;
    this.lookup = source?.db.prepare(`SELECT id, content_hash, modified_at, ${hasAddedAt ? 'added_at' : 'NULL AS added_at'} FROM organizations WHERE external_id = ?`);
    this.file = source?.file;
    this.hasHistory = source?.hasHistory ?? false;
    this.addedAtUnknownSince =
      this.hasHistory && !hasAddedAt ? (source!.db.prepare('SELECT min(published_at) AS oldest FROM dataset_versions').get() as { oldest: string }).oldest : undefined;
    this.publishedAt = source?.publishedAt;
    this.removeFile = source?.removeFile;
  }

  /** Every organization is new. */
  static readonly none = new PreviousVersions();

  /** The organizations of a SQLite snapshot (none if it is missing, unreadable, or of a format whose organizations table differs). */
  static fromSnapshot(snapshot: string | undefined): PreviousVersions {
    if (snapshot === undefined) return PreviousVersions.none;
    let db: DatabaseSync | undefined;
    try {
      db = openSnapshot(snapshot);
      const meta = snapshotMeta(db);
      const format = Number(meta.format);
      if (format >= ORGANIZATIONS_TABLE_SINCE_FORMAT && format <= STORE_FORMAT) {
        return new PreviousVersions({ db, file: snapshot, hasHistory: format >= HISTORY_SINCE_FORMAT, hasAddedAt: format >= ADDED_AT_SINCE_FORMAT, publishedAt: meta.publishedAt });
      }
    } catch {
      // unreadable: every organization counts as new
    }
    if (db?.isOpen) db.close();
    return PreviousVersions.none;
  }

  /**
   * The live dataset read from elsewhere (another backend's live generation), kept in a scratch SQLite
   * file at `file` while the build runs, so memory stays flat at any size. The file is removed on close.
   */
  static async fromRows(rows: PreviousRows, file: string): Promise<PreviousVersions> {
    rmSync(file, { force: true });
    // Not in defensive mode, which would ignore journal_mode = OFF.
    const db = new DatabaseSync(file, { defensive: false });
    const remove = () => rmSync(file, { force: true });
    try {
      db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
      db.exec(
        'CREATE TABLE organizations (position INTEGER PRIMARY KEY, id TEXT NOT NULL, external_id TEXT NOT NULL UNIQUE, content_hash TEXT NOT NULL, modified_at INTEGER NOT NULL, added_at INTEGER NOT NULL)',
      );
      db.exec(HISTORY_TABLES);
      // What a live dataset of an older format does not say is filled in as fromSnapshot takes it: since the line's oldest version.
      const unknownSince = rows.versions[0]?.published_at ?? '';
      db.exec('BEGIN');
      const insert = db.prepare('INSERT OR REPLACE INTO organizations (id, external_id, content_hash, modified_at, added_at) VALUES (?, ?, ?, ?, ?)');
      for await (const row of rows.organizations) insert.run(row.id, row.externalId, row.contentHash, storedInstant(row.modifiedAt), storedInstant(row.addedAt ?? unknownSince));
      const insertVersion = db.prepare('INSERT INTO dataset_versions (sequence, version, published_at, taxonomies_version) VALUES (?, ?, ?, ?)');
      for (const row of rows.versions) insertVersion.run(row.sequence, row.version, row.published_at, row.taxonomies_version);
      const insertRemoved = db.prepare('INSERT INTO removed_organizations (id, added_at, removed_at, json, json_crc) VALUES (?, ?, ?, ?, ?)');
      for (const row of rows.removed) insertRemoved.run(row.id, row.added_at ?? unknownSince, row.removed_at, row.json, documentCheck(row.json));
      db.exec('COMMIT');
      db.exec('CREATE UNIQUE INDEX organizations_id ON organizations (id)');
    } catch (error) {
      db.close();
      remove();
      throw error;
    }
    return new PreviousVersions({ db, file, hasHistory: rows.versions.length > 0, hasAddedAt: true, publishedAt: rows.versions.at(-1)?.published_at, removeFile: remove });
  }

  /**
   * What the organization of this id, external id and content hash carries on from the live dataset:
   * its `last_modified` if its content hash is the same, and since when it was served if the live
   * dataset serves it and carries its line on (a new line serves everything since its first version).
   */
  carriedOn(id: string, externalId: string, contentHash: string): CarriedTimes {
    const row = this.lookup?.get(externalId) as { id: string; content_hash: string; modified_at: number | string; added_at: number | string | null } | undefined;
    return {
      modifiedAt: row !== undefined && row.content_hash.startsWith(contentHash) ? servedInstant(row.modified_at) : undefined,
      addedAt: row !== undefined && row.id === id && this.hasHistory ? (row.added_at === null ? this.addedAtUnknownSince : servedInstant(row.added_at)) : undefined,
    };
  }

  close(): void {
    if (this.db?.isOpen) this.db.close();
    this.removeFile?.();
  }
}
