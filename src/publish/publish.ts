import { readdirSync, renameSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BUILDING_SUFFIX,
  CHECKSUM_SUFFIX,
  POINTER_FILE,
  SNAPSHOT_SUFFIX,
  checksumPath,
  isSnapshotName,
  publishedSnapshots,
  readPointer,
  snapshotsPath,
  summarizeSnapshot,
  writeChecksum,
} from '../store/sqlite/snapshot-directory.ts';
import { buildSnapshot } from '../build/build.ts';
import { acquireLock } from './import-lock.ts';
import { StorageFault, makeDirectories, onDisk, storageFault } from './storage-faults.ts';
import { syncPath } from '../build/durable.ts';
import { PreviousVersions } from '../build/previous-versions.ts';
import type { BuildOptions, BuildResult } from '../build/build.ts';
import type { DatasetInput } from '../hsds/records.ts';
import { formatCount } from '../text.ts';


export interface PublishResult extends BuildResult {
  /** False when the input gave exactly the version already live (nothing was switched). */
  changed: boolean;
  /** The snapshot file now live. */
  snapshot: string;
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

/**
 * Bytes of snapshot per organization, to foresee how much room an import needs: about what the
 * bundled IRS data's snapshot takes (235 MB for 326,224 organizations at store format 14, its
 * documents packed; the search index, facets and history included). The live snapshot's own ratio is used instead
 * when it holds enough organizations for its fixed part (the taxonomies) not to dominate.
 */
const BYTES_PER_ORGANIZATION = 750;
const ORGANIZATIONS_FOR_OWN_RATIO = 10_000;

/** The room a snapshot of `organizations` is expected to take, judged from the live one where it can be. */
function expectedSnapshotBytes(organizations: number, live: string | undefined): number {
  let perOrganization = BYTES_PER_ORGANIZATION;
  if (live !== undefined) {
    try {
      const { organizations: liveOrganizations } = summarizeSnapshot(live);
      if (liveOrganizations >= ORGANIZATIONS_FOR_OWN_RATIO) perOrganization = statSync(live).size / liveOrganizations;
    } catch {
      // A live snapshot that cannot be read says nothing: the default stands.
    }
  }
  return Math.ceil(organizations * perOrganization);
}

const freeBytes = (directory: string): number => {
  const { bavail, bsize } = statfsSync(directory);
  return bavail * bsize;
};

const megabytes = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes < 10e6 ? 1 : 0)} MB`;

/**
 * The room an import needs, seen once it knows how many organizations it writes. Refused at once when
 * the free space is clearly too small (under half what is expected: a publisher's records may be
 * smaller than the IRS data's); otherwise the figures go into the message of a full disk later on.
 */
class RoomForSnapshot {
  needed: number | undefined;
  free: number | undefined;
  private readonly directory: string;
  private readonly live: string | undefined;

  constructor(directory: string, live: string | undefined) {
    this.directory = directory;
    this.live = live;
  }

  check(organizations: number): void {
    this.needed = expectedSnapshotBytes(organizations, this.live);
    this.free = onDisk(this.directory, () => freeBytes(this.directory));
    if (this.free < this.needed / 2) {
      throw new StorageFault(`${this.directory}: not enough free space: ${formatCount(organizations)} organizations need about ${megabytes(this.needed)}, and ${megabytes(this.free)} are free`);
    }
  }

  /** A full disk's fault, with what was expected and what was free. */
  explain(fault: StorageFault): StorageFault {
    if (this.needed === undefined || this.free === undefined || !fault.outOfSpace) return fault;
    return new StorageFault(`${fault.message} (this import needs about ${megabytes(this.needed)}; ${megabytes(this.free)} were free when it began writing)`, true);
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
  options: Omit<BuildOptions, 'dryRun' | 'previous' | 'beforeWriting'> = {},
): Promise<PublishResult> {
  const directory = snapshotsPath(dataDir);
  makeDirectories(directory);
  const releaseLock = acquireLock(dataDir);
  try {
    const previous = onDisk(join(dataDir, POINTER_FILE), () => readPointer(dataDir));
    onDisk(directory, () => removeLeftovers(dataDir));
    const building = join(directory, `${process.pid}-${Date.now()}${BUILDING_SUFFIX}`);
    const previousVersions = PreviousVersions.fromSnapshot(previous === undefined ? undefined : join(directory, previous));
    const room = new RoomForSnapshot(directory, previous === undefined ? undefined : join(directory, previous));
    let result: BuildResult;
    try {
      const dataset = typeof input === 'function' ? await input() : input;
      result = await buildSnapshot(dataset, building, { ...options, previous: previousVersions, beforeWriting: (organizations) => room.check(organizations) }).catch(
        (error: unknown) => {
          rmSync(building, { force: true });
          const fault = storageFault(error, building);
          throw fault === undefined ? error : room.explain(fault);
        },
      );
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
