import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { buildApp } from '../../src/http/app.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { ImportBusy } from '../../src/publish/import-lock.ts';
import { PUBLISH_LOCK, publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, temporaryDirectory, versionOf } from '../helpers/app.ts';
import { postgresSuite, quietLog, temporaryDatabase, testSettings, waitFor } from '../helpers/postgres.ts';
import type { PostgresSettings } from '../../src/store/postgres/connection.ts';

/** Longer than any test here: the live pointer is then not read on a timer. */
const NEVER_MS = 3_600_000;


describe('PostgreSQL: several instances on one database', postgresSuite, () => {
  let database: Awaited<ReturnType<typeof temporaryDatabase>>;
  const instances: { app: FastifyInstance; stores: PostgresStores }[] = [];

  before(async () => {
    database = await temporaryDatabase();
    await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true });
    for (let index = 0; index < 2; index++) {
      // No reading of the pointer on a timer within the test: a publish reaches them by notification alone.
      const stores = await PostgresStores.open(testSettings(database.url), quietLog, NEVER_MS);
      instances.push({ app: await buildApp({ stores, logLevel: 'silent' }), stores });
    }
  });
  after(async () => {
    for (const { app } of instances) await app.close();
    await database.drop();
  });

  it('serves a new publish on every instance once notified of it, response caches included', async () => {
    const [first, second] = instances.map(({ app }) => app) as [FastifyInstance, FastifyInstance];
    const before = await versionOf(first);
    assert.equal(await versionOf(second), before);
    await first.inject(`${API}/organizations?search=renamed`); // now in the response cache
    const renamed = publishedOrganizations.map((organization, index) => (index === 0 ? { ...organization, name: 'Renamed Food Bank' } : organization));
    const published = await publishToPostgres(fixtureDataset({ organizations: renamed }), { url: database.url, migrate: false });
    assert.equal(published.changed, true);
    await waitFor(async () => (await versionOf(first)) === published.version && (await versionOf(second)) === published.version, 10_000, 'the new version');
    const search = JSON.parse((await first.inject(`${API}/organizations?search=renamed`)).body);
    assert.deepEqual(search.contents.map((item: { name: string }) => item.name), ['Renamed Food Bank']);
  });

  it('never mixes two versions in one response while a publish switches', async () => {
    const stores = await PostgresStores.open(testSettings(database.url), quietLog);
    const app = await buildApp({ stores, logLevel: 'silent', responseCacheBytes: 0 });
    try {
      const suffixed = publishedOrganizations.map((organization) => ({ ...organization, name: `${organization.name} Two` }));
      const seen = new Map<string, Set<boolean>>();
      const read = async () => {
        const response = await app.inject(`${API}/organizations?per_page=100`);
        const names: string[] = JSON.parse(response.body).contents.map((item: { name: string }) => item.name);
        const etag = String(response.headers.etag);
        const kinds = seen.get(etag) ?? new Set<boolean>();
        for (const name of names) kinds.add(name.endsWith(' Two'));
        seen.set(etag, kinds);
        assert.equal(new Set(names.map((name) => name.endsWith(' Two'))).size, 1, 'one version per response');
      };
      let publishing = true;
      const reader = (async () => {
        while (publishing) await read();
      })();
      const published = await publishToPostgres(fixtureDataset({ organizations: suffixed }), { url: database.url, migrate: false });
      await waitFor(async () => (await versionOf(app)) === published.version, 1000, 'the new version');
      publishing = false;
      await reader;
      await read(); // one on the new version, whenever the reader's last one began
      assert.ok(seen.size >= 2, 'responses of both versions were seen');
      for (const kinds of seen.values()) assert.equal(kinds.size, 1, 'one ETag, one version');
    } finally {
      await app.close();
    }
  });

  it('keeps the live and the previous generation only, and republishing the same input changes nothing', async () => {
    const again = await publishToPostgres(fixtureDataset(), { url: database.url, migrate: false });
    assert.equal(again.changed, true, 'the first dataset, back');
    const same = await publishToPostgres(fixtureDataset(), { url: database.url, migrate: false });
    assert.equal(same.changed, false);
    assert.equal(same.version, again.version);
    const pg = await import('pg');
    const client = new pg.default.Client(database.url);
    await client.connect();
    try {
      const schemas = await client.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'hsds_g%' ORDER BY nspname");
      const generations = await client.query('SELECT id FROM hsds.generations ORDER BY id');
      assert.equal(schemas.rowCount, 2);
      assert.deepEqual(schemas.rows.map((row) => row.nspname), generations.rows.map((row) => `hsds_g${row.id}`));
    } finally {
      await client.end();
    }
  });

  it('opens once it serves the live generation, and at once, unready, when the database cannot be reached', async () => {
    const stores = await PostgresStores.open(testSettings(database.url), quietLog);
    try {
      assert.notEqual(stores.generation, undefined);
      assert.equal((await stores.readiness()).ready, true);
    } finally {
      await stores.close();
    }
    // Nothing listens on port 9: the first attempt fails at once (the test's timeout would catch a wait).
    const nowhere = await PostgresStores.open(testSettings('postgres://postgres@127.0.0.1:9/none'), quietLog);
    try {
      assert.deepEqual(await nowhere.readiness(), { ready: false, reason: 'the database is not reachable' });
    } finally {
      await nowhere.close();
    }
  });

  it('publishes nothing from an invalid input, and leaves no trace', async () => {
    const live = await versionOf(instances[0]!.app);
    const broken = fixtureDataset({ organizations: [...publishedOrganizations, publishedOrganizations[0]!] });
    await assert.rejects(publishToPostgres(broken, { url: database.url, migrate: false }), /error/);
    assert.equal(await versionOf(instances[0]!.app), live);
  });
});

describe('PostgreSQL too slow to answer, or no connection free', postgresSuite, () => {
  let database: Awaited<ReturnType<typeof temporaryDatabase>>;
  let locker: pg.Client;

  before(async () => {
    database = await temporaryDatabase();
    await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true });
    locker = new pg.Client(database.url);
    await locker.connect();
  });
  after(async () => {
    await locker.end();
    await database.drop();
  });

  /** Holds an exclusive lock on every table of the live generation until `release`: reads of them wait. */
  async function lockLiveTables(): Promise<{ release: () => Promise<void> }> {
    const { rows } = await locker.query<{ name: string }>(
      "SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables WHERE table_schema = (SELECT 'hsds_g' || generation FROM hsds.live)",
    );
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${rows.map((row) => row.name).join(', ')} IN ACCESS EXCLUSIVE MODE`);
    return { release: async () => void (await locker.query('ROLLBACK')) };
  }

  async function appWith(settings: Partial<PostgresSettings>) {
    const stores = await PostgresStores.open(testSettings(database.url, settings), quietLog, NEVER_MS);
    return buildApp({ stores, logLevel: 'silent', responseCacheBytes: 0 });
  }

  const assertBusy = (response: { statusCode: number; headers: Record<string, unknown> }) => {
    assert.equal(response.statusCode, 503);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    assert.equal(response.headers['retry-after'], '1');
  };

  it('answers 503, never the bytes, for a document altered in the database, and serves the others', async () => {
    const app = await appWith({});
    try {
      const { body } = await app.inject(`${API}/organizations?per_page=2`);
      const [altered, intact] = JSON.parse(body).contents as { id: string; name: string }[];
      const schema = (await locker.query<{ name: string }>("SELECT 'hsds_g' || generation AS name FROM hsds.live")).rows[0]!.name;
      const replace = (was: string, now: string) =>
        locker.query(
          `UPDATE ${schema}.organization_items i SET json = replace(i.json, $1, $2) FROM ${schema}.organizations o WHERE o.position = i.position AND o.id = $3`,
          [was, now, altered!.id],
        );
      const name = `"${altered!.name}"`;
      const alteredName = `"${altered!.name.slice(0, -1)}#"`;
      await replace(name, alteredName);
      try {
        const answer = await app.inject(`${API}/organizations/${altered!.id}`);
        assert.equal(answer.statusCode, 503);
        assert.doesNotMatch(answer.body, /#"/);
        assert.equal((await app.inject(`${API}/organizations/${intact!.id}`)).statusCode, 200);
      } finally {
        // The tests that follow read the first page, which holds it.
        await replace(alteredName, name);
      }
    } finally {
      await app.close();
    }
  });

  it('answers 503 when a statement outlasts --database-statement-timeout, and 200 once it can read', async () => {
    const app = await appWith({ statementTimeoutMs: 100 });
    try {
      const lock = await lockLiveTables();
      try {
        assertBusy(await app.inject(`${API}/organizations?per_page=3`));
        assertBusy(await app.inject(`${API}/organizations?search=shelter`));
      } finally {
        await lock.release();
      }
      assert.equal((await app.inject(`${API}/organizations?per_page=3`)).statusCode, 200);
    } finally {
      await app.close();
    }
  });

  it('answers 503 when every pooled connection is busy past the connect timeout, and serves the request that held it', async () => {
    const app = await appWith({ poolSize: 1, connectTimeoutMs: 100, statementTimeoutMs: 60_000 });
    try {
      const lock = await lockLiveTables();
      let held: Promise<{ statusCode: number }>;
      try {
        held = app.inject(`${API}/organizations?per_page=3`);
        // The first request waits on the lock, on the pool's only connection, until the lock goes.
        await waitFor(async () => (await locker.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'hsds-org-api primary'")).rows[0].n === 1, 10_000, 'the first request to wait');
        assertBusy(await app.inject(`${API}/organizations?per_page=4`));
      } finally {
        await lock.release();
      }
      assert.equal((await held!).statusCode, 200);
    } finally {
      await app.close();
    }
  });
});

describe('PostgreSQL publishing', postgresSuite, () => {
  it('refuses a second import while one is publishing', async () => {
    const database = await temporaryDatabase();
    const pg = (await import('pg')).default;
    const holder = new pg.Client(database.url);
    await holder.connect();
    try {
      await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true });
      // What a running import holds (see publish-postgres.ts).
      await holder.query('SELECT pg_advisory_lock($1)', [PUBLISH_LOCK]);
      await assert.rejects(publishToPostgres(fixtureDataset(), { url: database.url, migrate: false }), ImportBusy);
      await holder.query('SELECT pg_advisory_unlock($1)', [PUBLISH_LOCK]);
      assert.equal((await publishToPostgres(fixtureDataset(), { url: database.url, migrate: false })).changed, false);
    } finally {
      await holder.end();
      await database.drop();
    }
  });

  it('makes a generation of the tables a SQLite snapshot holds: the same columns in the same order, the same keys and index names', async () => {
    const database = await temporaryDatabase();
    const directory = temporaryDirectory();
    const admin = new pg.Client({ connectionString: database.url });
    try {
      await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true });
      await buildSnapshot(fixtureDataset(), join(directory.path, 'snapshot.sqlite'));
      const snapshot = new DatabaseSync(join(directory.path, 'snapshot.sqlite'), { readOnly: true });
      await admin.connect();
      const schema = `hsds_g${(await admin.query<{ generation: string }>('SELECT generation FROM hsds.live')).rows[0]!.generation}`;
      const tables = (snapshot.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((row) => row.name);
      const generationTables = new Set((await admin.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema])).rows.map((row) => row.table_name));
      // The text tables share only their names: SQLite's are full-text indexes.
      const shared = tables.filter((table) => generationTables.has(table) && !table.endsWith('_text'));
      assert.ok(shared.length >= 15, `tables of both: ${shared.join(', ')}`);
      for (const table of shared) {
        const sqliteColumns = (snapshot.prepare(`SELECT name, type, "notnull" OR pk AS required FROM pragma_table_info('${table}') ORDER BY cid`).all() as { name: string; type: string; required: number }[]).map(
          (column) => `${column.name} ${column.type.toLowerCase()}${column.required ? ' required' : ''}`,
        );
        const pgColumns = (
          await admin.query<{ column_name: string; data_type: string; is_nullable: string }>(
            'SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
            [schema, table],
          )
        ).rows.map((column) => `${column.column_name} ${column.data_type}${column.is_nullable === 'NO' ? ' required' : ''}`);
        assert.deepEqual(pgColumns, sqliteColumns, table);
        const sqliteIndexes = (snapshot.prepare(`SELECT name FROM pragma_index_list('${table}') WHERE origin = 'c' ORDER BY name`).all() as { name: string }[]).map((row) => row.name);
        const pgIndexes = (await admin.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexname NOT LIKE '%_pkey' ORDER BY indexname", [schema, table])).rows.map((row) => row.indexname);
        assert.deepEqual(pgIndexes, sqliteIndexes, table);
        const sqliteKey = (snapshot.prepare(`SELECT name FROM pragma_table_info('${table}') WHERE pk > 0 ORDER BY pk`).all() as { name: string }[]).map((row) => row.name);
        const pgKey = (
          await admin.query<{ column_name: string }>(
            `SELECT a.attname AS column_name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
             WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
            [`${schema}.${table}`],
          )
        ).rows.map((row) => row.column_name);
        assert.deepEqual(pgKey, sqliteKey, table);
      }
      snapshot.close();
    } finally {
      await admin.end();
      await database.drop();
      directory.remove();
    }
  });
});

describe('PostgreSQL: publishing over a generation of the previous format', postgresSuite, () => {
  it('carries its versions on, so the changes feed keeps its clients across the upgrade', async () => {
    const database = await temporaryDatabase();
    try {
      const first = await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true }, { now: () => new Date('2026-01-01T00:00:00Z') });
      // A generation of format 10: the same tables, but no posting lists.
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ generation: string }>('SELECT generation FROM hsds.live');
        await admin.query('UPDATE hsds.generations SET format = 10 WHERE id = $1', [rows[0]!.generation]);
        await admin.query(`DROP TABLE hsds_g${rows[0]!.generation}.organization_postings`);
      } finally {
        await admin.end();
      }
      const changed = fixtureDataset({ organizations: publishedOrganizations.map((organization, index) => (index === 0 ? { ...organization, description: 'Changed' } : organization)) });
      const second = await publishToPostgres(changed, { url: database.url, migrate: false }, { now: () => new Date('2026-02-01T00:00:00Z') });
      assert.notEqual(second.version, first.version);
      const stores = await PostgresStores.open(testSettings(database.url), quietLog);
      try {
        const store = stores.acquire().store;
        assert.deepEqual((await store.versions()).map((version) => version.version), [first.version, second.version]);
        const changes = await store.changes(first.version);
        assert.ok(changes !== undefined, 'the first version is still one whose changes are kept');
      } finally {
        await stores.close();
      }
    } finally {
      await database.drop();
    }
  });
});
