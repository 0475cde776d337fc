import { basename, dirname, join, resolve } from 'node:path';
import { acquireLock } from '../publish/import-lock.ts';
import { switchPointer } from '../publish/publish.ts';
import {
  DamagedSnapshot,
  isSnapshotName,
  newestIntactSnapshot,
  publishedSnapshots,
  readPointer,
  snapshotsPath,
  summarizeSnapshot,
  verifySnapshot,
} from '../store/sqlite/snapshot-directory.ts';
import type { SnapshotSummary } from '../store/sqlite/snapshot-directory.ts';
import { counted } from '../text.ts';
import type { UseConfig } from '../config.ts';

const describe = (name: string, summary: SnapshotSummary): string =>
  `${name} (dataset ${summary.version}, published ${summary.publishedAt}, ${counted(summary.organizations, 'organization')})`;

/**
 * What to do when a data directory cannot be served as it is: the newest snapshot there that still
 * verifies (other than `damaged`) and the command that makes it live, or else to publish again.
 */
export async function recoveryAdvice(dataDir: string, snapshots: readonly string[], damaged?: string): Promise<string> {
  const republish = `publish your data again: hsds-org-api import --data-dir ${dataDir} <source...>`;
  const intact = await newestIntactSnapshot(dataDir, damaged === undefined ? [] : [basename(damaged)]);
  if (intact === undefined) {
    const held = snapshots.length === 0 ? '' : ` (${snapshots.length} there, none intact)`;
    return `No other intact snapshot is in ${snapshotsPath(dataDir)}${held}: ${republish}.`;
  }
  return `The newest intact snapshot is ${describe(intact.name, intact)}. To serve it: hsds-org-api use --data-dir ${dataDir} ${intact.name} (or ${republish}).`;
}

/** `use`: makes a published snapshot of the data directory the live one (to recover, or to roll back). */
export async function runUse(config: UseConfig, write: (line: string) => void, writeResult: (line: string) => void): Promise<number> {
  const name = basename(config.snapshot);
  const given = resolve(config.snapshot);
  const inDirectory = !config.snapshot.includes('/') || dirname(given) === resolve(snapshotsPath(config.dataDir));
  const names = publishedSnapshots(config.dataDir);
  if (!isSnapshotName(name) || !inDirectory || !names.includes(name)) {
    write(`Error: ${JSON.stringify(config.snapshot)} is not a snapshot of ${snapshotsPath(config.dataDir)}; it holds ${names.length === 0 ? 'none' : names.join(', ')}.`);
    return 1;
  }
  const path = join(snapshotsPath(config.dataDir), name);
  const release = acquireLock(config.dataDir);
  try {
    await verifySnapshot(path);
    const summary = summarizeSnapshot(path);
    if (readPointer(config.dataDir) === name) {
      writeResult(`Unchanged: ${describe(name, summary)} is already live.`);
      return 0;
    }
    switchPointer(config.dataDir, name);
    writeResult(`Now live: ${describe(name, summary)}. A running server follows once it has verified it too.`);
    return 0;
  } catch (error) {
    if (!(error instanceof DamagedSnapshot)) throw error;
    write(`Error: ${error.message}. Nothing was changed.`);
    return 1;
  } finally {
    release();
  }
}
