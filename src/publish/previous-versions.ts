import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import { DatasetKey, SNAPSHOT_FORMAT } from '../store/sqlite-schema.ts';

/**
 * What the live snapshot knew of each organization, so a new build can tell which organizations
 * changed. An organization whose served document is unchanged keeps its `last_modified`; any other
 * (new or changed) gets the new publish time. Without a readable live snapshot of the same format,
 * every organization counts as new.
 */
export class PreviousVersions {
  private readonly db: DatabaseSync | undefined;
  private readonly lookup: StatementSync | undefined;

  constructor(snapshot: string | undefined) {
    if (snapshot === undefined) return;
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(snapshot, { readOnly: true });
      const format = db.prepare('SELECT value FROM dataset WHERE key = ?').get(DatasetKey.format) as { value: string } | undefined;
      if (format?.value === String(SNAPSHOT_FORMAT)) {
        this.lookup = db.prepare('SELECT content_hash, modified_at FROM organizations WHERE external_id = ?');
        this.db = db;
        return;
      }
    } catch {
      // unreadable: every organization counts as new
    }
    if (db?.isOpen) db.close();
  }

  /** The previous `last_modified` of this organization if its content hash is the same, else undefined. */
  unchangedSince(externalId: string, contentHash: string): string | undefined {
    const row = this.lookup?.get(externalId) as { content_hash: string; modified_at: string } | undefined;
    return row !== undefined && row.content_hash === contentHash ? row.modified_at : undefined;
  }

  close(): void {
    if (this.db?.isOpen) this.db.close();
  }
}
