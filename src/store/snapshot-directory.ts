import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The layout of a data directory of SQLite snapshots:
 *
 *   current                   the live snapshot's file name (switched by an atomic rename)
 *   snapshots/<name>.sqlite   immutable snapshots, one per published version
 *   snapshots/<name>.building a snapshot being built (removed if its import dies)
 *   import.lock               held by the running import
 *
 * A reader follows `current`; only an import writes. Renames are atomic, so a reader sees either the
 * old pointer or the new one, never a half-written file.
 */
export const POINTER_FILE = 'current';
export const SNAPSHOTS_DIR = 'snapshots';
export const LOCK_FILE = 'import.lock';
export const SNAPSHOT_SUFFIX = '.sqlite';
export const BUILDING_SUFFIX = '.building';

export const snapshotsPath = (dataDir: string): string => join(dataDir, SNAPSHOTS_DIR);

/** The file name the pointer names, or undefined when nothing has been published. */
export function readPointer(dataDir: string): string | undefined {
  try {
    const name = readFileSync(join(dataDir, POINTER_FILE), 'utf8').trim();
    return /^[\w.-]+$/.test(name) ? name : undefined;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}

export const currentSnapshotPath = (dataDir: string): string | undefined => {
  const name = readPointer(dataDir);
  return name === undefined ? undefined : join(snapshotsPath(dataDir), name);
};
