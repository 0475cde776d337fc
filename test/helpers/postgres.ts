import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { waitFor } from './wait.ts';

export { waitFor };
import type { DatasetInput } from '../../src/hsds/records.ts';
import { publishToPostgres } from '../../src/publish/publish-postgres.ts';
import type { BuildOptions } from '../../src/build/build.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import type { PostgresSettings } from '../../src/store/postgres/connection.ts';

/**
 * The PostgreSQL the tests use: each test file makes databases of its own there and drops them.
 * `.ci/run` makes sure it is up; elsewhere, without it, the PostgreSQL tests are skipped.
 */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** `describe` options: under CI a missing PostgreSQL fails the tests; elsewhere it skips them. */
export const postgresSuite = { skip: process.env.CI === 'true' || (await reachable()) ? false : `no PostgreSQL at ${POSTGRES_URL} (set TEST_DATABASE_URL)` };

/** The URL of a database on the same server with another name. */
export const databaseUrl = (serverUrl: string, database: string): string => {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.href;
};

/** A new, empty database, dropped by `drop` (with every connection still open to it). */
export async function temporaryDatabase(serverUrl = POSTGRES_URL): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `hsds_test_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  return { url: databaseUrl(serverUrl, name), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export const testSettings = (url: string, overrides: Partial<PostgresSettings> = {}): PostgresSettings => ({
  url,
  replicaUrls: [],
  poolSize: 4,
  statementTimeoutMs: 5000,
  connectTimeoutMs: 1000,
  ...overrides,
});


export const quietLog = { info: () => {}, error: () => {} };

/** Publishes `input` to a new database and opens a provider on it, serving it. */
export async function publishedDatabase(input: DatasetInput, options: Pick<BuildOptions, 'now'> = {}) {
  const database = await temporaryDatabase();
  await publishToPostgres(input, { url: database.url, migrate: true }, options);
  const stores = await PostgresStores.open(testSettings(database.url), quietLog);
  return {
    url: database.url,
    stores,
    dispose: async () => {
      await stores.close();
      await database.drop();
    },
  };
}
