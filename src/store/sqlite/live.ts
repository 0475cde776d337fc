import { statSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { DamagedSnapshot, readPointer, snapshotsPath, summarizeSnapshot, verifySnapshot } from './snapshot-directory.ts';
import { SqliteStore } from './store.ts';
import type { LiveStoreLog, Readiness, StoreLease, StoreProvider } from '../store.ts';

interface Generation {
  name: string;
  store: SqliteStore;
  leases: number;
  retired: boolean;
}

/** How often the pointer is re-read, in case a file-system event was missed. */
const POLL_MS = 1000;

/** Opens a snapshot to serve: its checksum verified first, so no damaged byte is ever served. */
async function openVerified(dataDir: string, name: string): Promise<SqliteStore> {
  const path = join(snapshotsPath(dataDir), name);
  await verifySnapshot(path);
  // A snapshot of another format is refused in the words `use` and the recovery advice use.
  summarizeSnapshot(path);
  try {
    return new SqliteStore(path);
  } catch (error) {
    throw new DamagedSnapshot(path, `cannot be opened: ${(error as Error).message}`);
  }
}

/** What identifies one file on disk: a snapshot refused once is looked at again only if it changes. */
const fileIdentity = (path: string): string => {
  try {
    const stat = statSync(path);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return 'missing';
  }
};

/**
 * Serves the snapshot that a data directory's pointer names, and follows the pointer when an import
 * switches it: new requests get the new snapshot as soon as it is verified; the old one is closed when
 * its last request finishes. No restart, no dropped request. A new snapshot that fails verification
 * is refused (logged, and shown by readiness) and the current one stays served.
 */
export class LiveSqliteStores implements StoreProvider {
  private readonly dataDir: string;
  private readonly log: LiveStoreLog;
  private current: Generation;
  private readonly watcher: FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;
  /** The switch under way (verifying a new snapshot), so that refreshes do not overlap. */
  private switching: Promise<void> | undefined;
  /** A newer snapshot the pointer names that was refused, and why. */
  private refused: { name: string; identity: string; reason: string } | undefined;
  private closed = false;

  /** Serves the snapshot the pointer names now; throws DamagedSnapshot when it does not verify. */
  static async open(dataDir: string, log: LiveStoreLog): Promise<LiveSqliteStores> {
    const name = readPointer(dataDir);
    if (name === undefined) throw new Error(`no dataset has been published in ${dataDir}`);
    return new LiveSqliteStores(dataDir, log, name, await openVerified(dataDir, name));
  }

  private constructor(dataDir: string, log: LiveStoreLog, name: string, store: SqliteStore) {
    this.dataDir = dataDir;
    this.log = log;
    this.current = { name, store, leases: 0, retired: false };
    try {
      this.watcher = watch(dataDir, () => void this.refresh());
      this.watcher.on('error', () => {});
      this.watcher.unref();
    } catch {
      this.watcher = undefined;
    }
    this.timer = setInterval(() => void this.refresh(), POLL_MS);
    this.timer.unref();
  }

  get version(): string {
    return this.current.name;
  }

  /** Switches to the snapshot the pointer names now, if it changed and verifies. Safe to call at any time. */
  refresh(): Promise<void> {
    this.switching ??= this.follow().finally(() => (this.switching = undefined));
    return this.switching;
  }

  private async follow(): Promise<void> {
    let name: string | undefined;
    try {
      name = readPointer(this.dataDir);
    } catch {
      return;
    }
    // A pointer that names nothing (lost, emptied) is no reason to stop serving what is open.
    if (name === undefined || name === this.current.name || this.closed) return;
    const path = join(snapshotsPath(this.dataDir), name);
    const identity = fileIdentity(path);
    if (this.refused?.name === name && this.refused.identity === identity) return;
    let store: SqliteStore;
    try {
      store = await openVerified(this.dataDir, name);
    } catch (error) {
      if (readPointer(this.dataDir) !== name) return; // replaced again meanwhile: the next refresh follows
      const reason = error instanceof DamagedSnapshot ? error.message : `cannot open snapshot ${path}: ${(error as Error).message}`;
      this.refused = { name, identity, reason };
      this.log.error(`${reason}; still serving snapshot ${this.current.name}`);
      return;
    }
    if (this.closed) {
      await store.close();
      return;
    }
    this.refused = undefined;
    const previous = this.current;
    this.current = { name, store, leases: 0, retired: false };
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
    const { store } = this.current;
    // Snapshot names only: the paths and SQLite's words are for the log, not for any client.
    if (store.damage !== undefined) return { ready: false, damaged: true, reason: `snapshot ${this.current.name} is damaged (see the server log)` };
    const readiness: Readiness = { ready: true, version: (await store.info()).version };
    if (this.refused !== undefined) {
      readiness.warning = `newer snapshot ${this.refused.name} refused: it does not verify (see the server log); still serving ${this.current.name}`;
    }
    return readiness;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.watcher?.close();
    await this.switching;
    this.current.retired = true;
    if (this.current.leases === 0) await this.current.store.close();
  }
}
