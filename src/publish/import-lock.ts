import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_FILE } from '../store/sqlite/snapshot-directory.ts';
import { storageFault } from './storage-faults.ts';

export class ImportBusy extends Error {}

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
  const started = holder.started === undefined ? undefined : processStart(holder.pid);
  return started === undefined || started === holder.started;
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
