import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  BUILDING_SUFFIX,
  CHECKSUM_SUFFIX,
  LOCK_FILE,
  POINTER_FILE,
  SNAPSHOT_SUFFIX,
  checksumPath,
  isSnapshotName,
  publishedSnapshots,
  readPointer,
  snapshotsPath,
  summarizeSnapshot,
  writeChecksum,
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

/**
 * The file system refused what a publish needed (disk full, read-only, permissions, a symlink loop):
 * one line naming the path; nothing was published.
 */
export class StorageFault extends Error {}

/** Plain words for the errors a file system gives, by errno code. */
const ERRNO_REASONS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links (a symlink loop?)',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files on this system',
  EIO: 'an input/output error (a failing disk?)',
  ENOENT: 'does not exist',
};

/** SQLite's result codes for the same faults (node:sqlite errors carry `errcode`, not a path). */
const SQLITE_REASONS: Record<number, string> = {
  8: 'the file system is read-only',
  10: 'an input/output error (a failing disk, or the disk is full?)',
  13: 'the disk is full',
  14: 'the file cannot be created or opened',
  23: 'permission denied',
};

/**
 * A StorageFault for an error of the file system, or of SQLite writing `path`; undefined for any
 * other error (a bug, which keeps its stack).
 */
export function storageFault(error: unknown, path: string): StorageFault | undefined {
  if (error instanceof StorageFault) return error;
  const { code, errcode, path: errorPath } = error as { code?: string; errcode?: number; path?: string };
  const located = (where: string, reason: string) => new StorageFault(where === '' ? reason : `${where}: ${reason}`);
  if (code !== undefined && Object.hasOwn(ERRNO_REASONS, code)) return located(errorPath ?? path, ERRNO_REASONS[code]!);
  if (code === 'ERR_SQLITE_ERROR' && errcode !== undefined && Object.hasOwn(SQLITE_REASONS, errcode & 0xff)) {
    const temporary = errcode === 13 || errcode === 10 ? ` (or SQLite's temporary files in ${tmpdir()})` : '';
    return located(`${path}${temporary}`, SQLITE_REASONS[errcode & 0xff]!);
  }
  return undefined;
}

/** Runs `step` on `path`, turning a file-system fault into a StorageFault. */
function onDisk<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw storageFault(error, path) ?? error;
  }
}

/**
 * The lock names its holder by process id and start time, so a lock whose process id now belongs to
 * another process (after a reboot or a container restart) is seen to be stale.
 */
interface LockHolder {
  pid: number;
  /** When the process started, in clock ticks since boot (/proc/<pid>/stat); undefined off Linux. */
  started: string | undefined;
}

function processStart(pid: number): string | undefined {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isRunning(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as { code?: string }).code !== 'EPERM') return false;
  }
  // Alive: the same process only if it started when the lock says (where that can be known).
  return holder.started === undefined || processStart(holder.pid) === undefined || processStart(holder.pid) === holder.started;
}

function lockHolder(lock: string): LockHolder | undefined {
  try {
    const [pid, started] = readFileSync(lock, 'utf8').trim().split(/\s+/);
    const number = Number(pid);
    return Number.isInteger(number) && number > 0 ? { pid: number, started: started || undefined } : undefined;
  } catch {
    return undefined;
  }
}

const busy = (holder: LockHolder, lock: string): ImportBusy =>
  new ImportBusy(
    `another import (process ${holder.pid}) holds the lock ${lock} and is publishing; try again when it has finished. ` +
      `If no import is running (check with: ps -p ${holder.pid} -o args), the lock is stale: remove ${lock} and try again`,
  );

/**
 * One import (or `use`) at a time per data directory; a lock left by a dead import (or left empty) is
 * taken over. Returns the release.
 */
export function acquireLock(dataDir: string): () => void {
  const lock = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let descriptor: number;
    try {
      descriptor = openSync(lock, 'wx');
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw storageFault(error, lock) ?? error;
      const holder = lockHolder(lock);
      if (holder !== undefined && holder.pid !== process.pid && isRunning(holder)) throw busy(holder, lock);
      // Move the stale lock aside under a name of our own, so two imports cannot both take it over.
      const aside = `${lock}.${process.pid}.stale`;
      try {
        renameSync(lock, aside);
      } catch {
        continue; // another import moved it first
      }
      const moved = lockHolder(aside);
      if (moved !== undefined && moved.pid !== holder?.pid && isRunning(moved)) {
        // Between our look and our move, another import took the lock over: give it back.
        renameSync(aside, lock);
        throw busy(moved, lock);
      }
      rmSync(aside, { force: true });
      continue;
    }
    try {
      writeFileSync(descriptor, `${process.pid} ${processStart(process.pid) ?? ''}`.trim());
    } catch (error) {
      closeSync(descriptor);
      rmSync(lock, { force: true });
      throw storageFault(error, lock) ?? error;
    }
    closeSync(descriptor);
    return () => rmSync(lock, { force: true });
  }
  throw new ImportBusy(`could not take the import lock ${lock}; try again`);
}

/** Points `current` at a snapshot: write aside, then rename over, so readers see old or new. */
export function switchPointer(dataDir: string, name: string): void {
  const temporary = join(dataDir, `${POINTER_FILE}.${process.pid}.tmp`);
  onDisk(temporary, () => {
    writeFileSync(temporary, `${name}\n`);
    syncPath(temporary);
  });
  onDisk(join(dataDir, POINTER_FILE), () => {
    renameSync(temporary, join(dataDir, POINTER_FILE));
    syncPath(dataDir);
  });
}

/** What dead imports left: their builds (and SQLite's files beside them) and unswitched pointers. */
function removeLeftovers(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(`${POINTER_FILE}.`) && name.endsWith('.tmp')) rmSync(join(dataDir, name), { force: true });
  }
  const directory = snapshotsPath(dataDir);
  for (const name of readdirSync(directory)) {
    // `.building`, and SQLite's `.building-journal`, `-wal`, `-shm`.
    if (name.includes(BUILDING_SUFFIX)) rmSync(join(directory, name), { force: true });
  }
}

/**
 * After a successful switch only: removes snapshots no longer needed, and checksums whose snapshot
 * is gone. The previous snapshot stays, so servers still reading it (or about to switch) are never
 * cut off; an open file stays readable after removal anyway.
 */
function removeOldSnapshots(dataDir: string, keep: readonly string[]): void {
  const directory = snapshotsPath(dataDir);
  for (const name of readdirSync(directory)) {
    const snapshot = name.endsWith(CHECKSUM_SUFFIX) ? name.slice(0, -CHECKSUM_SUFFIX.length) : name;
    if (isSnapshotName(snapshot) && !keep.includes(snapshot)) rmSync(join(directory, name), { force: true });
  }
}

const timestampForName = (iso: string): string => iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

/**
 * Builds the dataset aside and makes it the live one in one atomic step. If anything fails (bad
 * input, a full disk, a crash, a kill) the live dataset is untouched and the next publish cleans up.
 * Nothing but a successful switch removes a published snapshot: when the pointer names none (it was
 * lost or damaged), the newest snapshot there is kept beside the new one.
 */
export async function publishDataset(
  input: DatasetInput | (() => Promise<DatasetInput>),
  dataDir: string,
  options: Omit<BuildOptions, 'dryRun' | 'previous'> = {},
): Promise<PublishResult> {
  const directory = snapshotsPath(dataDir);
  onDisk(directory, () => mkdirSync(directory, { recursive: true }));
  const releaseLock = acquireLock(dataDir);
  try {
    const previous = readPointer(dataDir);
    onDisk(directory, () => removeLeftovers(dataDir));
    const building = join(directory, `${process.pid}-${Date.now()}${BUILDING_SUFFIX}`);
    const previousVersions = PreviousVersions.fromSnapshot(previous === undefined ? undefined : join(directory, previous));
    let result: BuildResult;
    try {
      const dataset = typeof input === 'function' ? await input() : input;
      result = await buildSnapshot(dataset, building, { ...options, previous: previousVersions }).catch((error: unknown) => {
        rmSync(building, { force: true });
        throw storageFault(error, building) ?? error;
      });
    } finally {
      previousVersions.close();
    }
    const live = previous === undefined ? undefined : liveSummary(join(directory, previous));
    if (previous !== undefined && live?.version === result.version) {
      rmSync(building, { force: true });
      return { ...result, ...live, changed: false, snapshot: join(directory, previous) };
    }
    const name = `${timestampForName(result.publishedAt)}-${result.version}${SNAPSHOT_SUFFIX}`;
    const snapshot = join(directory, name);
    try {
      await writeChecksum(building, checksumPath(snapshot), name);
    } catch (error) {
      rmSync(building, { force: true });
      rmSync(checksumPath(snapshot), { force: true });
      throw storageFault(error, checksumPath(snapshot)) ?? error;
    }
    onDisk(snapshot, () => {
      renameSync(building, snapshot);
      syncPath(directory);
    });
    const kept = previous ?? publishedSnapshots(dataDir).find((other) => other !== name);
    switchPointer(dataDir, name);
    removeOldSnapshots(dataDir, kept === undefined ? [name] : [name, kept]);
    return { ...result, changed: true, snapshot };
  } finally {
    releaseLock();
  }
}

/** The live snapshot's version and publish time, when it is one of this format. */
function liveSummary(file: string): { version: string; publishedAt: string } | undefined {
  try {
    const { version, publishedAt } = summarizeSnapshot(file);
    return { version, publishedAt };
  } catch {
    return undefined;
  }
}
