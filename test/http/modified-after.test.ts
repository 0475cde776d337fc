import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { PreviousVersions } from '../../src/build/previous-versions.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations, unpublishedOrganizations } from '../fixtures/dataset.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';

/** Two publishes: the second changes one organization (NAT-003, "Beta Clinic") and adds one. */
describe('modified_after', () => {
  const directory = temporaryDirectory();
  let app: FastifyInstance;
  before(async () => {
    const first = join(directory.path, 'a.sqlite');
    const second = join(directory.path, 'b.sqlite');
    await buildSnapshot(fixtureDataset(), first, { now: () => new Date('2026-01-01T00:00:00Z') });
    const changed = publishedOrganizations.map((organization, index) => (index === 2 ? { ...organization, description: 'Changed' } : organization));
    const added = { ...publishedOrganizations[1]!, externalId: 'NAT-NEW', name: 'Brand New Shelter', tags: [{ taxonomy: 'Colors', code: 'red' }] };
    await buildSnapshot(fixtureDataset({ organizations: [...changed, added, ...unpublishedOrganizations] }), second, {
      now: () => new Date('2026-02-01T12:00:00Z'),
      previous: PreviousVersions.fromSnapshot(first),
    });
    const store = new SqliteStore(second);
    app = await buildApp({ stores: fixedStore(store), logLevel: 'silent' });
  });
  after(async () => {
    await app.close();
    directory.remove();
  });
  const get = (query: string) => getJson(app, `${API}/organizations?per_page=100&${query}`);
  const names = (body: any): string[] => body.contents.map((item: any) => item.name).sort();

  it('lists the organizations last modified on or after the instant', async () => {
    for (const value of ['2026-02-01', '2026-02-01T12:00:00Z', '2026-02-01T12:00:00.000Z', '2026-02-01T13:00:00+01:00', '2026-02-01T12:00', '2026-01-15']) {
      const { status, body } = await get(`modified_after=${encodeURIComponent(value)}`);
      assert.equal(status, 200, value);
      assert.deepEqual(names(body), ['Beta Clinic', 'Brand New Shelter'], value);
      for (const item of body.contents) assert.equal(item.last_modified, '2026-02-01T12:00:00.000Z');
    }
    assert.equal((await get('modified_after=2026-02-01T12:00:00.001Z')).body.total_items, 0);
    assert.equal((await get('modified_after=2025-12-31')).body.total_items, publishedOrganizations.length + 1);
    // An unescaped + arrives as a space.
    assert.equal((await get('modified_after=2026-02-01T13:00:00+01:00')).body.total_items, 2);
    // The edges of four-digit years: from the beginning, and after everything (even past 9999 once offset).
    for (const value of ['0001-01-01', '0000-01-01T00:00:00+01:00', '0099-12-31']) {
      assert.equal((await get(`modified_after=${encodeURIComponent(value)}`)).body.total_items, publishedOrganizations.length + 1, value);
    }
    for (const value of ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59-00:01']) {
      const { status, body } = await get(`modified_after=${encodeURIComponent(value)}&format=json`);
      assert.equal(status, 200, value);
      assert.equal(body.total_items, 0, value);
    }
  });

  it('combines with search and taxonomy filters', async () => {
    assert.deepEqual(names((await get('modified_after=2026-02-01&taxonomy_term_id=Colors:red')).body), ['Brand New Shelter']);
    assert.deepEqual(names((await get('modified_after=2026-02-01&search=shelter')).body), ['Brand New Shelter']);
    assert.deepEqual(names((await get('modified_after=2026-02-01&taxonomy_id=Colors')).body), ['Beta Clinic', 'Brand New Shelter']);
    assert.equal((await get('modified_after=2026-02-01&search=shelter&taxonomy_term_id=Colors:blue')).body.total_items, 0);
  });

  it('400 for anything but an ISO 8601 date or date-time', async () => {
    for (const value of ['yesterday', '2026-02-30', '2026-13-01', '2026-2-1', '20260201', '2026-02-01T25:00', '2026-02-01T12:00+24:00', '1700000000', '2026-02-01 12:00', '']) {
      const { status, body } = await get(`modified_after=${encodeURIComponent(value)}`);
      assert.equal(status, 400, value);
      assert.equal(body.invalid_params[0].name, 'modified_after');
      assert.match(body.invalid_params[0].reason, /ISO 8601/);
    }
  });
});
