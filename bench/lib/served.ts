/**
 * The server under benchmark and what it serves: `node src/cli.ts serve` as a child process (as in
 * production) with its memory sampled, and the synthetic dataset published once per size, seed and
 * format, into a data directory under bench/.cache/ or a PostgreSQL database of its own.
 */
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { NODE_FLAGS } from '../../bin/node-flags.js';
import { STORE_FORMAT } from '../../src/store/tables.ts';
import { waitUntilUp } from './load.ts';
import type { RawResponse } from './load.ts';
import { CACHE_DIR, log, MIB, REPO, residentMemory, runNode } from './run.ts';
import { syntheticDataset } from './synthetic.ts';

export const API = '/api/hsds/v3';

export interface Server {
  pid: number;
  /** SIGTERM, and its exit. */
  stop: () => Promise<void>;
  /** SIGKILL, and its exit. */
  kill: () => Promise<void>;
  /** Largest VmRSS seen while it ran, in bytes. */
  rssMax: () => number;
  exited: Promise<void>;
}

/** Runs a Node script of the checkout until it answers `readyUrl`, sampling its resident memory. */
export async function startNode(args: string[], readyUrl: string): Promise<Server> {
  const child = spawn(process.execPath, [...NODE_FLAGS, ...args], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  let rssMax = 0;
  const sampler = setInterval(() => {
    try {
      rssMax = Math.max(rssMax, residentMemory(child.pid!).rss);
    } catch {
      // exited
    }
  }, 100);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      clearInterval(sampler);
      resolve();
    }),
  );
  await waitUntilUp(readyUrl);
  const end = (signal: NodeJS.Signals) => async () => {
    child.kill(signal);
    await exited;
  };
  return { pid: child.pid!, rssMax: () => rssMax, stop: end('SIGTERM'), kill: end('SIGKILL'), exited };
}

/**
 * Runs `use` while a bare node:http server (baseline-server.ts) on `port` answers every request with
 * `recorded`: the runtime's ceiling, or a load generator's.
 */
export async function withBaseline<T>(recorded: RawResponse, port: number, use: (origin: string) => Promise<T>): Promise<T> {
  const directory = mkdtempSync(join(tmpdir(), 'hsds-bench-baseline-'));
  const file = join(directory, 'response.json');
  writeFileSync(file, JSON.stringify({ status: recorded.status, headers: recorded.headers, body: recorded.body.toString('base64') }));
  const server = await startNode(['bench/lib/baseline-server.ts', file, String(port)], `http://127.0.0.1:${port}/`);
  try {
    return await use(`http://127.0.0.1:${port}`);
  } finally {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** What the server serves: a data directory, or a PostgreSQL database. */
export type Served = { dataDir: string } | { databaseUrl: string };

export const servedArgs = (served: Served): string[] =>
  'dataDir' in served ? ['--data-dir', served.dataDir] : ['--database-url', served.databaseUrl];

/** `serve` on loopback at `port`, ready once `/readyz` says so. */
export const startServer = (served: Served, port: number, extraArgs: string[] = []): Promise<Server> =>
  startNode(
    ['src/cli.ts', 'serve', ...servedArgs(served), '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn', ...extraArgs],
    `http://127.0.0.1:${port}${API}/`,
  );

/** The sources of a synthetic dataset: the two taxonomies and the organizations. */
export const syntheticSources = (directory: string): string[] => [
  'data/ntee/ntee_codes.csv',
  'data/open-eligibility/open_eligibility_v2_terms.csv',
  relative(REPO, directory),
];

/** The synthetic dataset, published into bench/.cache/ once per size, seed and snapshot format. */
export async function servedSynthetic(organizations: number, seed: number): Promise<string> {
  const dataDir = join(CACHE_DIR, `served-${organizations}-${seed}-format${STORE_FORMAT}`);
  if (existsSync(join(dataDir, 'current'))) {
    log(`Serving the published dataset in ${relative(REPO, dataDir)}.`);
    return dataDir;
  }
  const dataset = await syntheticDataset(organizations, seed);
  log(`Publishing it into ${relative(REPO, dataDir)} ...`);
  rmSync(dataDir, { recursive: true, force: true });
  const run = await runNode(['src/cli.ts', 'import', '--data-dir', dataDir, '--progress', 'none', ...syntheticSources(dataset.directory)]);
  if (run.exitCode !== 0) throw new Error(`import failed (exit ${run.exitCode ?? run.signal})`);
  return dataDir;
}

/** The bundled dataset (data/), published once into bench/.cache/ per snapshot format. */
export async function servedBundled(): Promise<string> {
  const dataDir = join(CACHE_DIR, `bundled-format${STORE_FORMAT}`);
  if (existsSync(join(dataDir, 'current'))) return dataDir;
  log(`Publishing the bundled dataset (data/) into ${relative(REPO, dataDir)} ...`);
  rmSync(dataDir, { recursive: true, force: true });
  const run = await runNode(['src/cli.ts', 'import', '--data-dir', dataDir, '--progress', 'none', 'data']);
  if (run.exitCode !== 0) throw new Error(`import failed (exit ${run.exitCode ?? run.signal})`);
  return dataDir;
}

/** The name of the database that holds a synthetic dataset (by size, seed and formats). */
export const benchDatabaseName = (organizations: number, seed: number): string => `hsds_bench_${organizations}_${seed}_f${STORE_FORMAT}`;

/** `serverUrl` with another database. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.href;
}

/**
 * The synthetic dataset, published to a PostgreSQL database of its own once. The import's figures
 * are kept in bench/results/ like the others.
 */
export async function servedSyntheticPostgres(serverUrl: string, organizations: number, seed: number): Promise<string> {
  const name = benchDatabaseName(organizations, seed);
  const url = databaseUrl(serverUrl, name);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (exists) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const live = await client.query("SELECT to_regclass('hsds.live') IS NOT NULL AND (SELECT generation FROM hsds.live) IS NOT NULL AS published").catch(() => ({ rows: [{ published: false }] }));
      await client.end();
      if (live.rows[0]!.published) {
        log(`Serving the published dataset in PostgreSQL database ${name}.`);
        return url;
      }
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const dataset = await syntheticDataset(organizations, seed);
  log(`Publishing it into PostgreSQL database ${name} ...`);
  const run = await runNode(['src/cli.ts', 'import', '--database-url', url, '--migrate', '--progress', 'none', ...syntheticSources(dataset.directory)]);
  if (run.exitCode !== 0) throw new Error(`import failed (exit ${run.exitCode ?? run.signal})`);
  log(`Published in ${run.wallSeconds.toFixed(0)} s, peak RSS ${((run.peakRssBytes ?? 0) / MIB).toFixed(0)} MiB.`);
  return url;
}

/** Reads the live generation's tables into the OS page cache (pg_prewarm), as warmPageCache does for SQLite. */
export async function warmPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
    const started = performance.now();
    const { rows } = await client.query(
      `SELECT sum(pg_prewarm(c.oid, 'read'))::bigint AS blocks FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'hsds_g' || (SELECT generation FROM hsds.live) AND c.relkind IN ('r', 'i', 't')`,
    );
    log(`Read ${((Number(rows[0].blocks) * 8192) / MIB).toFixed(0)} MiB of the live generation into the page cache in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
  } catch (error) {
    log(`Could not prewarm (${(error as Error).message}); measuring cold.`);
  } finally {
    await client.end();
  }
}

/** The live snapshot file of a data directory. */
export const liveSnapshot = (dataDir: string): string => join(dataDir, 'snapshots', readFileSync(join(dataDir, 'current'), 'utf8').trim());

/**
 * Reads the served snapshot once, so the OS keeps it in its page cache, as it does for a server that
 * has been answering for a while; on a machine with less free memory than the file, part of every
 * scenario is disk reads (see --cold).
 */
export async function warmPageCache(dataDir: string): Promise<void> {
  const file = liveSnapshot(dataDir);
  log(`Reading ${relative(REPO, file)} into the page cache ...`);
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * MIB })) void chunk;
}
