import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, versionOf } from '../helpers/app.ts';
import { postgresSuite, quietLog, testSettings, waitFor } from '../helpers/postgres.ts';
import { privateCluster } from '../helpers/private-postgres.ts';
import type { PrivateCluster } from '../helpers/private-postgres.ts';

// PostgreSQL servers of their own, stopped and started under the API (npm run test:slow).

const DOWN_TEST_MS = 30_000;

describe('PostgreSQL going away and coming back', postgresSuite, () => {
  let cluster: PrivateCluster;
  let app: FastifyInstance;

  before(async () => {
    cluster = await privateCluster();
    await publishToPostgres(fixtureDataset(), { url: cluster.url, migrate: true });
    // Timeouts longer than the test's own: a request that waited on one, instead of failing as soon as
    // the database refuses it, would make the test time out.
    const stores = await PostgresStores.open(testSettings(cluster.url, { statementTimeoutMs: DOWN_TEST_MS * 2, connectTimeoutMs: DOWN_TEST_MS * 2 }), quietLog);
    // No response cache: every request below reaches the database.
    app = await buildApp({ stores, logLevel: 'silent', responseCacheBytes: 0 });
  });
  after(async () => {
    await app.close();
    cluster.destroy();
  });

  it('answers 503 problems without waiting while it is down, is not ready, and recovers by itself', { timeout: DOWN_TEST_MS }, async () => {
    const get = (path: string) => app.inject(`${API}${path}`);
    assert.equal((await get('/organizations?search=shelter')).statusCode, 200);
    assert.equal((await app.inject('/readyz')).statusCode, 200);

    // Requests in flight while the server stops, then requests while it is down.
    const inFlight = Array.from({ length: 20 }, (_, index) => get(`/organizations?page=${(index % 3) + 1}&per_page=${index + 1}`));
    cluster.stop();
    for (const response of await Promise.all(inFlight)) assert.ok([200, 503].includes(response.statusCode), `status ${response.statusCode}`);
    for (const path of ['/organizations?per_page=7', '/organizations?search=clinic', `/organizations/${'0'.repeat(8)}-0000-5000-8000-000000000000`, '/taxonomy_terms?page=2']) {
      const response = await get(path);
      assert.equal(response.statusCode, 503, path);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.headers['retry-after'], '1');
      assert.equal(response.headers['cache-control'], 'no-store');
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
