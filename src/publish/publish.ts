import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DatasetKey, SNAPSHOT_FORMAT } from '../store/sqlite-schema.ts';
import {
  BUILDING_SUFFIX,
  LOCK_FILE,
  POINTER_FILE,
  SNAPSHOT_SUFFIX,
  readPointer,
  snapshotsPath,
} from '../store/snapshot-directory.ts';
import { buildSnapshot } from './build.ts';
import { syncPath } from './durable.ts';
import { PreviousVersions } from './previous-versions.ts';
import type { BuildOptions, BuildResult } from './build.ts';
import type { DatasetInput } from '../hsds/records.ts';

export class ImportBusy extends Error {}

export interface PublishResult extends BuildResult {
  /** False when the input gave exactly the version already live (nothing was switched). */
  changed: boolean;
  /** The snapshot file now live. */
  snapshot: string;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

function lockHolder(lock: string): number | undefined {
  try {
    const holder = Number(readFileSync(lock, 'utf8').trim());
    return Number.isInteger(holder) && holder > 0 ? holder : undefined;
  } catch {
    return undefined;
  }
}

const busy = (holder: number, dataDir: string): ImportBusy =>
  new ImportBusy(`another import (process ${holder}) is publishing to ${dataDir}; try again when it has finished`);

/** One import at a time per data directory; a lock left by a dead import (or left empty) is taken over. */
function acquireLock(dataDir: string): () => void {
  const lock = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let descriptor: number;
    try {
      descriptor = openSync(lock, 'wx');
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      const holder = lockHolder(lock);
      if (holder !== undefined && holder !== process.pid && isRunning(holder)) {
        throw busy(holder, dataDir);
      }
      // Move the stale lock aside under a name of our own, so two imports cannot both take it over.
      const aside = `${lock}.${process.pid}.stale`;
      try {
        renameSync(lock, aside);
      } catch {
        continue; // another import moved it first
      }
      const moved = lockHolder(aside);
      if (moved !== undefined && moved !== holder && isRunning(moved)) {
        // Between our look and our move, another import took the lock over: give it back.
        renameSync(aside, lock);
        throw busy(moved, dataDir);
      }
      rmSync(aside, { force: true });
      continue;
    }
    try {
      writeFileSync(descriptor, String(process.pid));
    } catch (error) {
      closeSync(descriptor);
      rmSync(lock, { force: true });
      throw error;
    }
    closeSync(descriptor);
    return () => rmSync(lock, { force: true });
  }
  throw new ImportBusy(`could not take the import lock ${lock}; try again`);
}

/** The version and publish time of a snapshot of the current format (undefined for any other file). */
function snapshotInfo(file: string): { version: string; publishedAt: string } | undefined {
  try {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const value = (key: string) => (db.prepare('SELECT value FROM dataset WHERE key = ?').get(key) as { value: string } | undefined)?.value;
      const version = value(DatasetKey.version);
      const publishedAt = value(DatasetKey.publishedAt);
      if (value(DatasetKey.format) !== String(SNAPSHOT_FORMAT)) return undefined;
      return version === undefined || publishedAt === undefined ? undefined : { version, publishedAt };
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

/** Points `current` at a snapshot: write aside, then rename over, so readers see old or new. */
function switchPointer(dataDir: string, name: string): void {
  const temporary = join(dataDir, `${POINTER_FILE}.${process.pid}.tmp`);
  writeFileSync(temporary, `${name}\n`);
  syncPath(temporary);
  renameSync(temporary, join(dataDir, POINTER_FILE));
  syncPath(dataDir);
}

/**
 * Removes what dead imports left, and snapshots no longer needed. The previous snapshot stays, so
 * servers still reading it (or about to switch) are never cut off; an open file stays readable
 * after removal anyway.
 */
function collectGarbage(dataDir: string, keep: readonly (string | undefined)[]): void {
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(`${POINTER_FILE}.`) && name.endsWith('.tmp')) rmSync(join(dataDir, name), { force: true });
  }
  const directory = snapshotsPath(dataDir);
  for (const name of readdirSync(directory)) {
    // A build's own files and SQLite's beside them (`.building-journal`, `-wal`, `-shm`).
    const stale = name.includes(BUILDING_SUFFIX) || (name.endsWith(SNAPSHOT_SUFFIX) && !keep.includes(name));
    if (stale) rmSync(join(directory, name), { force: true });
  }
}

const timestampForName = (iso: string): string => iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

/**
 * Builds the dataset aside and makes it the live one in one atomic step. If anything fails (bad
 * input, a crash, a kill) the live dataset is untouched and the next publish cleans up.
 */
export async function publishDataset(
  input: DatasetInput | (() => Promise<DatasetInput>),
  dataDir: string,
  options: Omit<BuildOptions, 'dryRun' | 'previous'> = {},
): Promise<PublishResult> {
  const directory = snapshotsPath(dataDir);
  mkdirSync(directory, { recursive: true });
  const releaseLock = acquireLock(dataDir);
  try {
    const previous = readPointer(dataDir);
    collectGarbage(dataDir, [previous]);
    const building = join(directory, `${process.pid}-${Date.now()}${BUILDING_SUFFIX}`);
    const previousVersions = PreviousVersions.fromSnapshot(previous === undefined ? undefined : join(directory, previous));
    let result: BuildResult;
    try {
      result = await buildSnapshot(typeof input === 'function' ? await input() : input, building, { ...options, previous: previousVersions });
    } finally {
      previousVersions.close();
    }
    const live = previous === undefined ? undefined : snapshotInfo(join(directory, previous));
    if (previous !== undefined && live?.version === result.version) {
      rmSync(building, { force: true });
      return { ...result, ...live, changed: false, snapshot: join(directory, previous) };
    }
    const name = `${timestampForName(result.publishedAt)}-${result.version}${SNAPSHOT_SUFFIX}`;
    renameSync(building, join(directory, name));
    syncPath(directory);
    switchPointer(dataDir, name);
    collectGarbage(dataDir, [name, previous]);
    return { ...result, changed: true, snapshot: join(directory, name) };
  } finally {
    releaseLock();
  }
}
