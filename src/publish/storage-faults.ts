import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';

/**
 * The file system refused what a publish needed (disk full, read-only, permissions, a symlink loop):
 * one line naming the path; nothing was published.
 */
export class StorageFault extends Error {
  /** The disk (or the quota) had no room left: what more room would mend. */
  readonly outOfSpace: boolean;

  constructor(message: string, outOfSpace = false) {
    super(message);
    this.outOfSpace = outOfSpace;
  }
}

const OUT_OF_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT']);
/** SQLITE_FULL. */
const SQLITE_FULL = 13;

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
  const located = (where: string, reason: string, outOfSpace: boolean) => new StorageFault(where === '' ? reason : `${where}: ${reason}`, outOfSpace);
  if (code !== undefined && Object.hasOwn(ERRNO_REASONS, code)) return located(errorPath ?? path, ERRNO_REASONS[code]!, OUT_OF_SPACE_CODES.has(code));
  if (code === 'ERR_SQLITE_ERROR' && errcode !== undefined && Object.hasOwn(SQLITE_REASONS, errcode & 0xff)) {
    const temporary = errcode === SQLITE_FULL || errcode === 10 ? ` (or SQLite's temporary files in ${tmpdir()})` : '';
    return located(`${path}${temporary}`, SQLITE_REASONS[errcode & 0xff]!, (errcode & 0xff) === SQLITE_FULL);
  }
  return undefined;
}

/** Runs `step` on `path`, turning a file-system fault into a StorageFault. */
export function onDisk<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw storageFault(error, path) ?? error;
  }
}

/**
 * Makes a directory and any missing parents, a fault naming the path and the file system's reason:
 * Node's recursive mkdir says ENOENT ("does not exist") for whatever stopped it, a read-only file
 * system or a missing permission included, so the step that failed is taken again alone.
 */
export function makeDirectories(path: string): void {
  onDisk(path, () => {
    try {
      mkdirSync(path, { recursive: true });
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT' || dirname(path) === path) throw error;
      makeDirectories(dirname(path));
      mkdirSync(path);
    }
  });
}
