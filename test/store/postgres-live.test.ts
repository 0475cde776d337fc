import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/http/app.ts';
import { ImportBusy } from '../../src/publish/import-lock.ts';
import { PUBLISH_LOCK, publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API } from '../helpers/app.ts';
import { postgresSuite, quietLog, temporaryDatabase, testSettings, waitFor } from '../helpers/postgres.ts';
import { privateCluster } from '../helpers/private-postgres.ts';
import type { PrivateCluster } from '../helpers/private-postgres.ts';

const versionOf = async (app: FastifyInstance): Promise<string | undefined> => {
  const response = await app.inject(`${API}/`);
  return response.statusCode === 200 ? JSON.parse(response.body).dataset.version : undefined;
};

describe('PostgreSQL: several instances on one database', postgresSuite, () => {
  let database: Awaited<ReturnType<typeof temporaryDatabase>>;
  const instances: { app: FastifyInstance; stores: PostgresStores }[] = [];

  before(async () => {
    database = await temporaryDatabase();
    await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true });
    for (let index = 0; index < 2; index++) {
      const stores = await PostgresStores.open(testSettings(database.url), quietLog);
      instances.push({ app: await buildApp({ stores, logLevel: 'silent' }), stores });
    }
  });
  after(async () => {
    for (const { app } of instances) await app.close();
    await database.drop();
  });

  it('serves a new publish on every instance within a second, response caches included', async () => {
    const [first, second] = instances.map(({ app }) => app) as [FastifyInstance, FastifyInstance];
    const before = await versionOf(first);
    assert.equal(await versionOf(second), before);
    await first.inject(`${API}/organizations?search=renamed`); // now in the response cache
    const renamed = publishedOrganizations.map((organization, index) => (index === 0 ? { ...organization, name: 'Renamed Food Bank' } : organization));
    const published = await publishToPostgres(fixtureDataset({ organizations: renamed }), { url: database.url, migrate: false });
    const committed = performance.now();
    assert.equal(published.changed, true);
    await waitFor(async () => (await versionOf(first)) === published.version && (await versionOf(second)) === published.version, 1000, 'the new version');
    const lag = performance.now() - committed;
    assert.ok(lag < 1000, `served after ${lag} ms`);
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
    const started = performance.now();
    const nowhere = await PostgresStores.open(testSettings('postgres://postgres@127.0.0.1:9/none'), quietLog);
    try {
      assert.ok(performance.now() - started < 2000);
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

describe('PostgreSQL going away and coming back', postgresSuite, () => {
  let cluster: PrivateCluster;
  let app: FastifyInstance;

  before(async () => {
    cluster = await privateCluster();
    await publishToPostgres(fixtureDataset(), { url: cluster.url, migrate: true });
    const stores = await PostgresStores.open(testSettings(cluster.url), quietLog);
    // No response cache: every request below reaches the database.
    app = await buildApp({ stores, logLevel: 'silent', responseCacheBytes: 0 });
  });
  after(async () => {
    await app.close();
    cluster.destroy();
  });

  it('answers 503 problems fast while it is down, is not ready, and recovers by itself', async () => {
    const get = (path: string) => app.inject(`${API}${path}`);
    assert.equal((await get('/organizations?search=shelter')).statusCode, 200);
    assert.equal((await app.inject('/readyz')).statusCode, 200);

    // Requests in flight while the server stops, then requests while it is down.
    const inFlight = Array.from({ length: 20 }, (_, index) => get(`/organizations?page=${(index % 3) + 1}&per_page=${index + 1}`));
    cluster.stop();
    for (const response of await Promise.all(inFlight)) assert.ok([200, 503].includes(response.statusCode), `status ${response.statusCode}`);
    for (const path of ['/organizations?per_page=7', '/organizations?search=clinic', `/organizations/${'0'.repeat(8)}-0000-5000-8000-000000000000`, '/taxonomy_terms?page=2']) {
      const started = performance.now();
      const response = await get(path);
      const took = performance.now() - started;
      assert.equal(response.statusCode, 503, path);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.headers['retry-after'], '1');
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.ok(took < 1500, `${path} took ${took} ms`);
    }
    assert.equal((await app.inject('/readyz')).statusCode, 503);
    assert.equal((await app.inject('/healthz')).statusCode, 200);

    cluster.start();
    await waitFor(async () => (await get('/organizations?per_page=7')).statusCode === 200, 10_000, 'recovery');
    assert.equal((await get('/organizations?search=clinic')).statusCode, 200);
    assert.equal((await app.inject('/readyz')).statusCode, 200);
  });
});

describe('PostgreSQL with a read replica', postgresSuite, () => {
  let primary: PrivateCluster;
  let replica: PrivateCluster;
  let app: FastifyInstance;
  let stores: PostgresStores;

  before(async () => {
    primary = await privateCluster();
    replica = await primary.replica();
    await publishToPostgres(fixtureDataset(), { url: primary.url, migrate: true });
    stores = new PostgresStores(testSettings(primary.url, { replicaUrls: [replica.url] }), quietLog);
    app = await buildApp({ stores, logLevel: 'silent', responseCacheBytes: 0 });
    await waitFor(() => stores.generation !== undefined, 10_000, 'the generation on the replica');
  });
  after(async () => {
    await app.close();
    replica.destroy();
    primary.destroy();
  });

  it('reads from the replica (even with the primary down) and follows publishes made on the primary', async () => {
    const first = await versionOf(app);
    primary.stop();
    for (const path of ['/organizations?per_page=3', '/organizations?search=shelter', '/taxonomy_terms?top_only=true']) {
      assert.equal((await app.inject(`${API}${path}`)).statusCode, 200, path);
    }
    assert.equal((await app.inject('/readyz')).statusCode, 200, 'ready: reads are served');
    primary.start();
    const renamed = publishedOrganizations.map((organization, index) => (index === 1 ? { ...organization, name: 'Replicated Shelter' } : organization));
    const published = await publishToPostgres(fixtureDataset({ organizations: renamed }), { url: primary.url, migrate: false });
    assert.notEqual(published.version, first);
    await waitFor(async () => (await versionOf(app)) === published.version, 10_000, 'the new version through the replica');
    const search = JSON.parse((await app.inject(`${API}/organizations?search=replicated`)).body);
    assert.deepEqual(search.contents.map((item: { name: string }) => item.name), ['Replicated Shelter']);
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
