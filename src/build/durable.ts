import { closeSync, fsyncSync, openSync } from 'node:fs';

/** Flushes a file or a directory (after a rename in it) to disk, so it survives a crash. */
export function syncPath(path: string): void {
  const descriptor = openSync(path, 'r');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
