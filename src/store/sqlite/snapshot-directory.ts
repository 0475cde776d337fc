import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { openSnapshot, otherFormat, snapshotMeta } from './snapshot-file.ts';

/**
 * The layout of a data directory of SQLite snapshots:
 *
 *   current                          the live snapshot's file name (switched by an atomic rename)
 *   snapshots/<name>.sqlite          immutable snapshots, one per published version
 *   snapshots/<name>.sqlite.sha256   its SHA-256, written at build (`sha256sum -c` reads it)
 *   snapshots/<name>.building        a snapshot being built (removed if its import dies)
 *   import.lock                      held by the running import
 *
 * A reader follows `current`; only an import (or `use`) writes. Renames are atomic, so a reader
 * sees either the old pointer or the new one, never a half-written file.
 */
export const POINTER_FILE = 'current';
export const SNAPSHOTS_DIR = 'snapshots';
export const LOCK_FILE = 'import.lock';
export const SNAPSHOT_SUFFIX = '.sqlite';
export const BUILDING_SUFFIX = '.building';
export const CHECKSUM_SUFFIX = '.sha256';

export const snapshotsPath = (dataDir: string): string => join(dataDir, SNAPSHOTS_DIR);

/** A snapshot file name as the pointer may hold it: no directory part, nothing but the name. */
export const isSnapshotName = (name: string): boolean => /^[\w.-]+\.sqlite$/.test(name) && name !== SNAPSHOT_SUFFIX;

export type Pointer =
  | { state: 'missing' }
  /** The file is there but holds no snapshot name (empty, or anything else): `content` as read, cut short. */
  | { state: 'invalid'; content: string }
  | { state: 'valid'; name: string }
  /** It cannot be read (a directory there, no permission): the file system's error, naming the pointer's path. */
  | { state: 'unreadable'; error: Error };

export function readPointerFile(dataDir: string): Pointer {
  const path = join(dataDir, POINTER_FILE);
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return { state: 'missing' };
    // Reading a directory fails without a path: the message must still say which file.
    (error as { path?: string }).path ??= path;
    return { state: 'unreadable', error: error as Error };
  }
  const name = content.trim();
  return isSnapshotName(name) ? { state: 'valid', name } : { state: 'invalid', content: content.slice(0, 200) };
}

/**
 * The file name the pointer names, or undefined when it names none (missing, empty or not a name).
 * A pointer that cannot be read is the file system's error, with its path.
 */
export function readPointer(dataDir: string): string | undefined {
  const pointer = readPointerFile(dataDir);
  if (pointer.state === 'unreadable') throw pointer.error;
  return pointer.state === 'valid' ? pointer.name : undefined;
}

export const currentSnapshotPath = (dataDir: string): string | undefined => {
  const name = readPointer(dataDir);
  return name === undefined ? undefined : join(snapshotsPath(dataDir), name);
};

/** Published snapshot files in the directory (build leftovers and checksums aside), newest first. */
export function publishedSnapshots(dataDir: string): string[] {
  const directory = snapshotsPath(dataDir);
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return [];
    throw error;
  }
  // Names begin with the publish time to the second; the file's time orders two of the same second.
  const written = (name: string) => fileTime(join(directory, name));
  return names
    .filter((name) => isSnapshotName(name))
    .map((name) => ({ name, time: written(name) }))
    .sort((a, b) => b.time - a.time || (a.name < b.name ? 1 : -1))
    .map(({ name }) => name);
}

function fileTime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** A snapshot that cannot be served as it is, with why. */
export class DamagedSnapshot extends Error {
  readonly path: string;
  constructor(path: string, reason: string) {
    super(`snapshot ${path} ${reason}`);
    this.path = path;
  }
}

export const checksumPath = (snapshot: string): string => `${snapshot}${CHECKSUM_SUFFIX}`;

/**
 * Hashes a file in a thread of its own: a server verifying a new snapshot (gigabytes, at 2,000,000
 * organizations) takes no time from its event loop, however busy, and the verification's pace does
 * not depend on the requests'. The worker reads 4 MiB at a time and answers the digest or the error's
 * code.
 */
const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { closeSync, openSync, readSync } = require('node:fs');
try {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  const descriptor = openSync(workerData, 'r');
  try {
    for (let read; (read = readSync(descriptor, buffer, 0, buffer.length, null)) > 0; ) hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(descriptor);
  }
  parentPort.postMessage({ digest: hash.digest('hex') });
} catch (error) {
  parentPort.postMessage({ code: error.code, message: error.message });
}
`;

/** The SHA-256 of a file, as hex. Rejects with an error carrying the file system's `code`. */
export function fileSha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(HASH_WORKER, { eval: true, workerData: path });
    worker.once('message', (answer: { digest?: string; code?: string; message?: string }) => {
      if (answer.digest !== undefined) resolve(answer.digest);
      else reject(Object.assign(new Error(answer.message), { code: answer.code }));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the hashing thread exited (${code})`)));
  });
}

/**
 * Writes the checksum of `file` (a finished build) for the snapshot it is about to become, named
 * `snapshotName`, in sha256sum's format, and flushes it to disk.
 */
export async function writeChecksum(file: string, checksumFile: string, snapshotName: string): Promise<string> {
  const digest = await fileSha256(file);
  const descriptor = openSync(checksumFile, 'w');
  try {
    writeSync(descriptor, `${digest}  ${snapshotName}\n`);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  return digest;
}

const explainErrno = (error: unknown): string => {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'ELOOP') return 'is a symbolic link loop';
  return `cannot be read (${code ?? (error as Error).message})`;
};

/** What a snapshot holds that a person recognises it by. */
export interface SnapshotSummary {
  version: string;
  publishedAt: string;
  organizations: number;
}

/**
 * Checks that a published snapshot is whole: its checksum file is there and matches every byte.
 * Throws DamagedSnapshot saying what is wrong.
 */
export async function verifySnapshot(path: string): Promise<void> {
  let expected: string;
  try {
    const line = readFileSync(checksumPath(path), 'utf8');
    const match = /^([0-9a-f]{64}) [ *](.+)\n?$/.exec(line);
    if (match === null || match[2] !== basename(path)) throw new DamagedSnapshot(path, `has a checksum file that does not read (${checksumPath(path)})`);
    expected = match[1]!;
  } catch (error) {
    if (error instanceof DamagedSnapshot) throw error;
    if ((error as { code?: string }).code === 'ENOENT' && existsSync(path)) {
      throw new DamagedSnapshot(path, `has no checksum file ${basename(checksumPath(path))} (published by an older version, or the file was lost), so it cannot be verified`);
    }
    if (!existsSync(path)) throw new DamagedSnapshot(path, 'does not exist');
    throw new DamagedSnapshot(path, `has a checksum file that ${explainErrno(error)}`);
  }
  let actual: string;
  try {
    actual = await fileSha256(path);
  } catch (error) {
    throw new DamagedSnapshot(path, explainErrno(error));
  }
  if (actual !== expected) {
    throw new DamagedSnapshot(path, `is damaged: its content does not match the checksum written when it was published (SHA-256 ${actual.slice(0, 12)}…, expected ${expected.slice(0, 12)}…)`);
  }
}

/** The version, publish time and size of a snapshot of this format; DamagedSnapshot for anything else. */
export function summarizeSnapshot(path: string): SnapshotSummary {
  let db: DatabaseSync | undefined;
  try {
    db = openSnapshot(path);
    const meta = snapshotMeta(db);
    const problem = otherFormat(meta);
    if (problem !== undefined) throw new DamagedSnapshot(path, problem);
    return { version: meta.version!, publishedAt: meta.publishedAt!, organizations: meta.organizations! };
  } catch (error) {
    if (error instanceof DamagedSnapshot) throw error;
    throw new DamagedSnapshot(path, `is not a readable snapshot (${(error as Error).message})`);
  } finally {
    if (db?.isOpen) db.close();
  }
}

/** The size of a file, for messages ("4.0 GB"); undefined when it cannot be read. */
export function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** What a data directory holds, as far as serving it goes. */
export type DataDirectoryState =
  /** Nothing was ever published here (at most what a killed first import left). */
  | { kind: 'empty' }
  | { kind: 'published'; name: string }
  /** Snapshots may be here, but the pointer names none of them. */
  | { kind: 'broken'; problem: string; snapshots: string[] };

export function inspectDataDirectory(dataDir: string): DataDirectoryState {
  const pointer = readPointerFile(dataDir);
  const pointerPath = join(dataDir, POINTER_FILE);
  const snapshots = publishedSnapshots(dataDir);
  if (pointer.state === 'valid') {
    if (existsSync(join(snapshotsPath(dataDir), pointer.name))) return { kind: 'published', name: pointer.name };
    return { kind: 'broken', problem: `${pointerPath} names ${pointer.name}, which is not in ${snapshotsPath(dataDir)}`, snapshots };
  }
  if (pointer.state === 'missing' && snapshots.length === 0) return { kind: 'empty' };
  const problem =
    pointer.state === 'missing'
      ? `${pointerPath} is missing`
      : pointer.state === 'invalid'
        ? `${pointerPath} does not name a snapshot (it holds ${JSON.stringify(pointer.content)})`
        : `${pointerPath} ${explainErrno(pointer.error)}, where the file naming the live snapshot belongs (move it away first)`;
  return { kind: 'broken', problem, snapshots };
}

/** The newest snapshot in the directory that verifies, with what it holds; undefined when none does. */
export async function newestIntactSnapshot(dataDir: string, except: readonly string[] = []): Promise<({ name: string } & SnapshotSummary) | undefined> {
  for (const name of publishedSnapshots(dataDir)) {
    if (except.includes(name)) continue;
    const path = join(snapshotsPath(dataDir), name);
    try {
      await verifySnapshot(path);
      return { name, ...summarizeSnapshot(path) };
    } catch {
      // damaged: try the one before
    }
  }
  return undefined;
}
