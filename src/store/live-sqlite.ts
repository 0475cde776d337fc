import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { readPointer, snapshotsPath } from './snapshot-directory.ts';
import { SqliteStore } from './sqlite.ts';
import type { Readiness, Store, StoreLease, StoreProvider } from './store.ts';

interface Generation {
  name: string;
  store: Store;
  leases: number;
  retired: boolean;
}

export interface LiveStoreLog {
  info(message: string): void;
  error(message: string): void;
}

/** How often the pointer is re-read, in case a file-system event was missed. */
const POLL_MS = 1000;

/**
 * Serves the snapshot that a data directory's pointer names, and follows the pointer when an import
 * switches it: new requests get the new snapshot at once; the old one is closed when its last
 * request finishes. No restart, no dropped request.
 */
export class LiveSqliteStores implements StoreProvider {
  private readonly dataDir: string;
  private readonly log: LiveStoreLog;
  private current: Generation;
  private readonly watcher: FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(dataDir: string, log: LiveStoreLog) {
    this.dataDir = dataDir;
    this.log = log;
    const name = readPointer(dataDir);
    if (name === undefined) throw new Error(`no dataset has been published in ${dataDir}`);
    this.current = this.open(name);
    try {
      this.watcher = watch(dataDir, () => this.refresh());
      this.watcher.on('error', () => {});
      this.watcher.unref();
    } catch {
      this.watcher = undefined;
    }
    this.timer = setInterval(() => this.refresh(), POLL_MS);
    this.timer.unref();
  }

  get version(): string {
    return this.current.name;
  }

  private open(name: string): Generation {
    return { name, store: new SqliteStore(join(snapshotsPath(this.dataDir), name)), leases: 0, retired: false };
  }

  /** Switches to the snapshot the pointer names now, if it changed. Safe to call at any time. */
  refresh(): void {
    let name: string | undefined;
    try {
      name = readPointer(this.dataDir);
    } catch {
      return;
    }
    if (name === undefined || name === this.current.name) return;
    let next: Generation;
    try {
      next = this.open(name);
    } catch (error) {
      // E.g. the snapshot was replaced again before we opened it; the next refresh follows the pointer.
      this.log.error(`cannot open published snapshot ${name}: ${(error as Error).message}`);
      return;
    }
    const previous = this.current;
    this.current = next;
    this.log.info(`now serving snapshot ${name}`);
    previous.retired = true;
    if (previous.leases === 0) void previous.store.close();
  }

  acquire(): StoreLease {
    const generation = this.current;
    generation.leases++;
    let released = false;
    return {
      store: generation.store,
      release: () => {
        if (released) return;
        released = true;
        generation.leases--;
        if (generation.retired && generation.leases === 0) void generation.store.close();
      },
    };
  }

  async readiness(): Promise<Readiness> {
    return { ready: true, version: (await this.current.store.info()).version };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.watcher?.close();
    this.current.retired = true;
    if (this.current.leases === 0) await this.current.store.close();
  }
}
