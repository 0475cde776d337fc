import type { DatabaseSync } from 'node:sqlite';
import { snapshotFragments } from '../../src/store/sqlite/snapshot-file.ts';
import { servedInstant } from '../../src/store/tables.ts';

/** An organization of a snapshot file as it is served: its keys, and its two forms unpacked (see packed-documents.ts). */
export interface SnapshotOrganization {
  position: number;
  id: string;
  external_id: string;
  modified_at: string;
  item: string;
  document: string;
}

/** Every organization of an open snapshot, in position order, read as the store reads them. */
export function snapshotOrganizations(db: DatabaseSync): SnapshotOrganization[] {
  const fragments = snapshotFragments(db);
  const rows = db
    .prepare(
      `SELECT o.position, o.id, o.external_id, o.modified_at, i.json AS item, d.json AS details FROM organizations o
         JOIN organization_items i USING (position) JOIN organization_documents d USING (position) ORDER BY o.position`,
    )
    .all() as unknown as (Omit<SnapshotOrganization, 'document'> & { details: string })[];
  return rows.map(({ details, ...row }) => ({
    ...row,
    modified_at: servedInstant(row.modified_at),
    item: fragments.unpack(row.item, 'test'),
    document: fragments.organization(row.item, details, 'test'),
  }));
}
