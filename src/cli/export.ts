import { mkdirSync, readdirSync } from 'node:fs';
import { DEFAULT_POSTGRES_SETTINGS } from '../store/postgres/connection.ts';
import { PostgresStores } from '../store/postgres/live.ts';
import { LiveSqliteStores } from '../store/sqlite/live.ts';
import type { LiveStoreLog, StoreProvider } from '../store/store.ts';
import { writeTabularPackage } from '../exchange/tabular-package.ts';
import { counted } from '../text.ts';
import type { ExportConfig } from '../config.ts';

/** `export`: the live dataset as an HSDS tabular package, written into a new or empty folder. */
export async function runExport(config: ExportConfig, write: (line: string) => void, writeResult: (line: string) => void): Promise<number> {
  let existing: string[] = [];
  try {
    existing = readdirSync(config.directory);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error;
  }
  if (existing.length > 0) {
    write(`${config.directory} is not empty (${counted(existing.length, 'entry', 'entries')}): give a new or empty folder, so that no file of another package is left beside this one.`);
    return 1;
  }
  const problems: string[] = [];
  const log: LiveStoreLog = { info: () => {}, error: (message) => problems.push(message) };
  const stores: StoreProvider =
    config.databaseUrl === undefined
      ? await LiveSqliteStores.open(config.dataDir, log)
      : await PostgresStores.open({ url: config.databaseUrl, replicaUrls: [], ...DEFAULT_POSTGRES_SETTINGS }, log);
  const lease = stores.acquire();
  try {
    const readiness = await stores.readiness();
    if (!readiness.ready) {
      write(`Nothing to export: ${readiness.reason ?? problems.join('; ')}`);
      return 1;
    }
    mkdirSync(config.directory, { recursive: true });
    const started = performance.now();
    const written = await writeTabularPackage(lease.store, config.directory);
    const { rows } = written;
    writeResult(
      `Exported dataset ${written.version} into ${config.directory}: ${counted(rows.organization, 'organization')}, ${counted(rows.taxonomy, 'taxonomy', 'taxonomies')}, ` +
        `${counted(rows.taxonomy_term, 'taxonomy term')}, ${counted(rows.attribute, 'attribute')}, ${counted(rows.organization_identifier, 'organization identifier')}, ` +
        `${counted(rows.url, 'url')}. Took ${((performance.now() - started) / 1000).toFixed(1)} s, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB.`,
    );
    return 0;
  } finally {
    lease.release();
    await stores.close();
  }
}
