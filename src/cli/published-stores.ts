import { DEFAULT_POSTGRES_SETTINGS } from '../store/postgres/connection.ts';
import { PostgresStores } from '../store/postgres/live.ts';
import { LiveSqliteStores } from '../store/sqlite/live.ts';
import { readPointer } from '../store/sqlite/snapshot-directory.ts';
import type { LiveStoreLog, StoreProvider } from '../store/store.ts';

/**
 * The dataset published in a data directory, or in PostgreSQL when a database URL is given, opened
 * for a command that reads it (export, sync) as a server would; problems it logs are collected.
 * Undefined when nothing was ever published in the data directory.
 */
export async function openPublished(dataDir: string, databaseUrl: string | undefined): Promise<{ stores: StoreProvider; problems: string[] } | undefined> {
  if (databaseUrl === undefined && readPointer(dataDir) === undefined) return undefined;
  const problems: string[] = [];
  const log: LiveStoreLog = { info: () => {}, error: (message) => problems.push(message) };
  const stores =
    databaseUrl === undefined
      ? await LiveSqliteStores.open(dataDir, log)
      : await PostgresStores.open({ url: databaseUrl, replicaUrls: [], ...DEFAULT_POSTGRES_SETTINGS }, log);
  return { stores, problems };
}
