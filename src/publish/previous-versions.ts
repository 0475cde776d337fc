import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import { ORGANIZATIONS_TABLE_SINCE_FORMAT, SNAPSHOT_FORMAT } from '../store/sqlite-schema.ts';
import { openSnapshot, snapshotMeta } from '../store/snapshot-file.ts';

/** What the live dataset knew of one organization. */
export interface PreviousVersion {
  externalId: string;
  contentHash: string;
  modifiedAt: string;
}

/**
 * What the live dataset knew of each organization, so a new build can tell which organizations
 * changed. An organization whose served document is unchanged keeps its `last_modified`; any other
 * (new or changed) gets the new publish time. Without a readable live dataset of the same format,
 * every organization counts as new.
 */
export class PreviousVersions {
  private readonly db: DatabaseSync | undefined;
  private readonly lookup: StatementSync | undefined;
  private readonly removeFile: (() => void) | undefined;

  private constructor(db?: DatabaseSync, lookupSql?: string, removeFile?: () => void) {
    this.db = db;
    this.lookup = lookupSql === undefined ? undefined : db?.prepare(lookupSql);
    this.removeFile = removeFile;
  }

  /** Every organization is new. */
  static readonly none = new PreviousVersions();

  /** The organizations of a SQLite snapshot (none if it is missing, unreadable, or of a format whose organizations table differs). */
  static fromSnapshot(snapshot: string | undefined): PreviousVersions {
    if (snapshot === undefined) return PreviousVersions.none;
    let db: DatabaseSync | undefined;
    try {
      db = openSnapshot(snapshot);
      const format = Number(snapshotMeta(db).format);
      if (format >= ORGANIZATIONS_TABLE_SINCE_FORMAT && format <= SNAPSHOT_FORMAT) {
        return new PreviousVersions(db, 'SELECT content_hash, modified_at FROM organizations WHERE external_id = ?');
      }
    } catch {
      // unreadable: every organization counts as new
    }
    if (db?.isOpen) db.close();
    return PreviousVersions.none;
  }

  /**
   * Organizations read from elsewhere (another backend's live dataset), kept in a scratch SQLite file
   * at `file` while the build runs, so memory stays flat at any size. The file is removed on close.
   */
  static async fromRows(rows: AsyncIterable<PreviousVersion>, file: string): Promise<PreviousVersions> {
    rmSync(file, { force: true });
    // Not in defensive mode, which would ignore journal_mode = OFF.
    const db = new DatabaseSync(file, { defensive: false });
    const remove = () => rmSync(file, { force: true });
    try {
      db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
      db.exec('CREATE TABLE organizations (external_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL, modified_at TEXT NOT NULL) WITHOUT ROWID');
      const insert = db.prepare('INSERT OR REPLACE INTO organizations (external_id, content_hash, modified_at) VALUES (?, ?, ?)');
      db.exec('BEGIN');
      for await (const row of rows) insert.run(row.externalId, row.contentHash, row.modifiedAt);
      db.exec('COMMIT');
    } catch (error) {
      db.close();
      remove();
      throw error;
    }
    return new PreviousVersions(db, 'SELECT content_hash, modified_at FROM organizations WHERE external_id = ?', remove);
  }

  /** The previous `last_modified` of this organization if its content hash is the same, else undefined. */
  unchangedSince(externalId: string, contentHash: string): string | undefined {
    const row = this.lookup?.get(externalId) as { content_hash: string; modified_at: string } | undefined;
    return row !== undefined && row.content_hash === contentHash ? row.modified_at : undefined;
  }

  close(): void {
    if (this.db?.isOpen) this.db.close();
    this.removeFile?.();
  }
}
