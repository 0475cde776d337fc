import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreProvider } from '../store/store.ts';
import { PACKAGE_FILES, writeTabularPackage } from './tabular-package.ts';
import { zipFiles } from './package-zip.ts';

/** The archive of a dataset version, once made. */
export interface PackageArchive {
  path: string;
  bytes: number;
  version: string;
}

/** The dataset served changed while its package was being made: ask again, for the new one. */
export class DatasetChanged extends Error {}

const ARCHIVE = /^([0-9a-f]+)\.zip$/;
/** Work of one process: `<version>.<pid>.partial` (the tables) and `<version>.<pid>.zip.partial`. */
const PARTIAL = /^[0-9a-f]+\.(\d+)\.(?:zip\.)?partial$/;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * The HSDS tabular package of the dataset served, as a ZIP archive made once per dataset version and
 * kept as a file in `directory` (`<version>.zip`), then sent as it is to every request for that
 * version. It is made the first time it is asked for: the tables written from the store into a
 * folder of this process's own, zipped beside it, and renamed into place, so a reader never sees a
 * part of one; then the archives of other versions are removed (one being sent stays readable until
 * its response ends). Servers sharing the directory (workers, instances) may each make the same
 * version once; they write the same bytes.
 *
 * `pause` is awaited between batches of organizations: the tables are written on the event loop, in
 * turns shared with requests (zlib compresses on its own threads).
 */
export class PackageArchives {
  private readonly directory: string;
  private readonly stores: StoreProvider;
  private readonly pause: () => Promise<void>;
  private readonly making = new Map<string, Promise<PackageArchive>>();

  constructor(directory: string, stores: StoreProvider, pause: () => Promise<void>) {
    this.directory = directory;
    this.stores = stores;
    this.pause = pause;
  }

  /** The archive of `version`, which must be the version served; made now if it is not yet. */
  archive(version: string): Promise<PackageArchive> {
    const made = this.existing(version);
    if (made !== undefined) return Promise.resolve(made);
    let making = this.making.get(version);
    if (making === undefined) {
      making = this.make(version).finally(() => this.making.delete(version));
      this.making.set(version, making);
    }
    return making;
  }

  private existing(version: string): PackageArchive | undefined {
    const path = join(this.directory, `${version}.zip`);
    try {
      return { path, bytes: statSync(path).size, version };
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  private async make(version: string): Promise<PackageArchive> {
    const lease = this.stores.acquire();
    const tables = join(this.directory, `${version}.${process.pid}.partial`);
    const partial = join(this.directory, `${version}.${process.pid}.zip.partial`);
    try {
      const info = await lease.store.info();
      if (info.version !== version) throw new DatasetChanged(`dataset ${version} is no longer the one served (now ${info.version})`);
      mkdirSync(this.directory, { recursive: true });
      rmSync(tables, { recursive: true, force: true });
      mkdirSync(tables);
      await writeTabularPackage(lease.store, tables, undefined, this.pause);
      await zipFiles(tables, PACKAGE_FILES, partial, new Date(info.publishedAt));
      const path = join(this.directory, `${version}.zip`);
      renameSync(partial, path);
      this.removeOthers(version);
      return { path, bytes: statSync(path).size, version };
    } finally {
      lease.release();
      rmSync(tables, { recursive: true, force: true });
      rmSync(partial, { force: true });
    }
  }

  /** Archives of other versions, and what processes that are gone left half made. */
  private removeOthers(version: string): void {
    for (const name of readdirSync(this.directory)) {
      const archive = ARCHIVE.exec(name);
      const partial = PARTIAL.exec(name);
      if ((archive !== null && archive[1] !== version) || (partial !== null && !processAlive(Number(partial[1])))) {
        rmSync(join(this.directory, name), { recursive: true, force: true });
      }
    }
  }
}
