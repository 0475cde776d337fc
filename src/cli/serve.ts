import cluster from 'node:cluster';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import closeWithGrace from 'close-with-grace';
import pg from 'pg';
import { buildApp } from '../http/app.ts';
import { ensureMigrated } from '../publish/publish-postgres.ts';
import { LiveSqliteStores } from '../store/sqlite/live.ts';
import { PostgresStores } from '../store/postgres/live.ts';
import { DamagedSnapshot, inspectDataDirectory } from '../store/sqlite/snapshot-directory.ts';
import { recoveryAdvice } from './use.ts';
import type { LiveStoreLog, StoreProvider } from '../store/store.ts';
import { runImport } from './import.ts';
import { DEFAULT_DATA_DIR, defaultDatasetImport } from '../config.ts';
import type { ServeConfig } from '../config.ts';
import { runWorkers, WORKER_STOP } from './workers.ts';
import { servingMessage, STOPPED_MESSAGE } from './serving.ts';

const importDefaultDataset = (config: ServeConfig, write: (line: string) => void, database: ServeConfig['database']) =>
  runImport('import', defaultDatasetImport(config, database, [DEFAULT_DATA_DIR]), write, write);

/**
 * Before serving from PostgreSQL: migrations when asked for, and the default dataset when nothing
 * was ever published. A database that cannot be reached now is no reason not to start: the server
 * answers 503 and is not ready until it can.
 */
async function prepareDatabase(config: ServeConfig, write: (line: string) => void): Promise<number> {
  const database = config.database!;
  const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: database.connectTimeoutMs, application_name: 'hsds-org-api serve' });
  try {
    await client.connect();
  } catch (error) {
    write(`PostgreSQL is not reachable (${(error as Error).message}); serving 503s until it is.`);
    return 0;
  }
  try {
    await ensureMigrated(client, database.migrate);
    const live = await client.query<{ generation: string | null }>('SELECT generation FROM hsds.live');
    if (live.rows[0]?.generation != null) return 0;
    const newest = await client.query<{ id: string; version: string; published_at: string }>('SELECT id, version, published_at FROM hsds.generations ORDER BY id DESC LIMIT 1');
    const generation = newest.rows[0];
    if (generation !== undefined) {
      // Published before, but the pointer was cleared: an import now would drop what is there.
      write(
        `Error: hsds.live names no generation, though generation ${generation.id} (dataset ${generation.version}, published ${generation.published_at}) is in the database. Nothing was changed. ` +
          `To serve it: UPDATE hsds.live SET generation = ${generation.id}; (or publish your data again with hsds-org-api import).`,
      );
      return 1;
    }
  } finally {
    await client.end().catch(() => {});
  }
  write('Nothing published to this database yet: importing the default dataset from data/ (once).');
  return importDefaultDataset(config, write, database);
}

/**
 * Before serving a data directory: the default dataset when nothing was ever published there. A
 * directory whose pointer names no snapshot is never imported into (that would replace what a
 * publisher has there): it is refused with what is there and how to recover.
 */
async function prepareDataDirectory(config: ServeConfig, write: (line: string) => void): Promise<number> {
  const state = inspectDataDirectory(config.dataDir);
  if (state.kind === 'published') return 0;
  if (state.kind === 'empty') {
    write(`Nothing published in ${config.dataDir} yet: importing the default dataset from data/ (once).`);
    return importDefaultDataset(config, write, undefined);
  }
  write(`Error: ${state.problem}, so there is nothing to serve. Nothing was changed.`);
  write(await recoveryAdvice(config.dataDir, state.snapshots));
  return 1;
}

/**
 * `serve`: the API over the live dataset (SQLite snapshots or PostgreSQL), following each new
 * publish; with `--workers N`, N processes (cli/workers.ts) that the dataset is prepared for once.
 */
/**
 * Where /datapackage.zip keeps its archives: `packages/` in the data directory (with PostgreSQL too,
 * where the directory holds nothing else); a temporary folder when that cannot be written.
 */
function packagesDirectory(dataDir: string): string | undefined {
  const directory = join(dataDir, 'packages');
  try {
    mkdirSync(directory, { recursive: true });
    accessSync(directory, constants.W_OK);
    return directory;
  } catch {
    return undefined;
  }
}

export async function runServe(config: ServeConfig, write: (line: string) => void): Promise<number> {
  if (cluster.isWorker) return serveHere(config, write);
  const code = config.database === undefined ? await prepareDataDirectory(config, write) : await prepareDatabase(config, write);
  if (code !== 0) return code;
  return config.workers > 1 ? runWorkers(config.workers, write) : serveHere(config, write);
}

/** Serves the prepared dataset from this process until SIGTERM or SIGINT (or, in a worker, the primary's word). */
async function serveHere(config: ServeConfig, write: (line: string) => void): Promise<number> {
  // A worker hears the primary's word to stop from its start: it may come while the store opens.
  let stopAsked = false;
  let stop = (): void => {
    stopAsked = true;
  };
  let signalled = false;
  if (cluster.isWorker) {
    process.on('message', (message: { type?: string }) => {
      if (message?.type !== WORKER_STOP || signalled) return;
      signalled = true;
      stop();
    });
  }
  let log: LiveStoreLog = { info: write, error: write };
  const forwardLog: LiveStoreLog = { info: (message) => log.info(message), error: (message) => log.error(message) };
  let stores: StoreProvider;
  try {
    stores = config.database === undefined ? await LiveSqliteStores.open(config.dataDir, forwardLog) : await PostgresStores.open(config.database, forwardLog);
  } catch (error) {
    if (!(error instanceof DamagedSnapshot)) throw error;
    write(`Error: the live ${error.message}. Nothing was changed.`);
    write(await recoveryAdvice(config.dataDir, [], error.path));
    return 1;
  }
  const app = await buildApp({
    stores,
    publicBaseUrl: config.publicBaseUrl,
    trustProxy: config.trustProxy,
    metrics: config.metrics,
    logLevel: config.logLevel,
    cacheMaxAge: config.cacheMaxAge,
    responseCacheBytes: config.responseCacheBytes,
    rateLimitPerMinute: config.rateLimitPerMinute,
    maxExports: config.maxExports,
    loadShedding: { maxEventLoopDelayMs: config.maxEventLoopDelayMs },
    rootDetails: config.rootDetails,
    packagesDirectory: packagesDirectory(config.dataDir),
  });
  log = { info: (message) => app.log.info(message), error: (message) => app.log.error(message) };
  const say = (message: string) => {
    // In a worker, the primary says it for all of them.
    if (!cluster.isWorker) write(message);
  };
  const onTimeout = () => {
    app.log.error(`responses still under way after ${config.shutdownTimeoutMs / 1000} s: exiting without them`);
    say(`Stopped after ${config.shutdownTimeoutMs / 1000} s (--shutdown-timeout), cutting off the responses still under way.`);
  };
  // Stops listening at once, lets responses under way finish, then closes the store.
  const grace = closeWithGrace({ delay: config.shutdownTimeoutMs, onTimeout }, async ({ err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    await app.close();
    say(err ? `Stopped after an error: ${err.message}` : STOPPED_MESSAGE);
  });
  if (cluster.isWorker) {
    // Once: a signal may have started the same shutdown already.
    process.on('SIGTERM', () => (signalled = true)).on('SIGINT', () => (signalled = true));
    stop = () => {
      void grace.close();
    };
    if (stopAsked) {
      await grace.close();
      return 0;
    }
  }
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Else its exit handler would close the app again and exit with 0.
    grace.uninstall();
    await app.close();
    const { code, address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    // The main port or the metrics port (--port, --metrics-port): the address says which.
    write(`Error: cannot listen on ${address}:${port} (${code === 'EADDRINUSE' ? 'already in use' : code === 'EACCES' ? 'not permitted' : 'no such address here'}): choose another --port, --host, --metrics-port or --metrics-host.`);
    return 1;
  }
  const listening = app.server.address() as AddressInfo;
  say(servingMessage(listening.address, listening.port));
  return 0;
}
