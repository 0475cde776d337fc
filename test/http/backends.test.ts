import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { organizationId, taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import { dataset, now, PATHS } from '../helpers/backend-requests.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { checkEveryResponse } from '../helpers/hsds-schemas.ts';
import { postgresSuite, publishedDatabase } from '../helpers/postgres.ts';

/** Headers that differ from one response to the next, whatever the store. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id']);
const stable = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !VOLATILE.has(name)));

describe('SQLite and PostgreSQL serve the same bytes for the same dataset', postgresSuite, () => {
  const directory = temporaryDirectory();
  let sqlite: FastifyInstance;
  let postgres: FastifyInstance;
  let disposePostgres: () => Promise<void>;
  let invalidResponses: string[] = [];

  before(async () => {
    const file = join(directory.path, 'snapshot.sqlite');
    await buildSnapshot(dataset(), file, { now });
    sqlite = await buildApp({ stores: fixedStore(new SqliteStore(file)), logLevel: 'silent' });
    const database = await publishedDatabase(dataset(), { now });
    disposePostgres = database.dispose;
    postgres = await buildApp({ stores: database.stores, logLevel: 'silent' });
    invalidResponses = [...checkEveryResponse(sqlite), ...checkEveryResponse(postgres)];
  });
  after(async () => {
    await sqlite.close();
    await postgres.close();
    await disposePostgres();
    directory.remove();
    assert.deepEqual(invalidResponses, [], 'every document answered validates against HSDS 3.0 and 3.2.3');
  });

  for (const path of PATHS) {
    it(`GET ${path}`, async () => {
      for (const encoding of ['identity', 'br']) {
        const request = { method: 'GET' as const, url: `${API}${path}`, headers: { 'accept-encoding': encoding } };
        const [fromSqlite, fromPostgres] = await Promise.all([sqlite.inject(request), postgres.inject(request)]);
        assert.equal(fromPostgres.statusCode, fromSqlite.statusCode);
        assert.deepEqual(stable(fromPostgres.headers), stable(fromSqlite.headers));
        assert.ok(fromPostgres.rawPayload.equals(fromSqlite.rawPayload), `the ${encoding} bodies differ`);
      }
    });
  }

  it('redirects an EIN as typed, a taxonomy code and a taxonomy:code on PostgreSQL too', async () => {
    for (const [path, target] of [
      ['/organizations/01-0211530?x=1', `/organizations/${organizationId('010211530')}?x=1`],
      ['/organizations/10211530', `/organizations/${organizationId('010211530')}`],
      ['/taxonomies/COLORS?x=1', `/taxonomies/${taxonomyId('Colors')}?x=1`],
      ['/taxonomy_terms/THINGS%3Aa?x=1', `/taxonomy_terms/${taxonomyTermId('things', 'A')}?x=1`],
    ]) {
      const response = await postgres.inject({ method: 'HEAD', url: `${API}${path}` });
      assert.equal(response.statusCode, 308, path);
      assert.equal(response.headers.location, `http://localhost${API}${target}`, path);
    }
  });

  it('finds words alike on both backends: folded, stemmed, in any column', async () => {
    const names = async (query: string) => {
      const response = await postgres.inject(`${API}/organizations?search=${query}`);
      return JSON.parse(response.body).contents.map((item: { name: string }) => item.name);
    };
    assert.deepEqual(await names('cafe+families'), ['Housing Helpers', 'Café Ünïcode Straße'], 'title matches first');
    assert.deepEqual(await names('istanbul'), ['Café Ünïcode Straße']);
    assert.deepEqual(await names('runner'), ['Housing Helpers']);
  });
});
