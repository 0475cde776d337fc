import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import type { DatasetInput, OrganizationRecord } from '../../src/hsds/records.ts';
import { buildApp } from '../../src/http/app.ts';
import { publishDataset } from '../../src/publish/publish.ts';
import { publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { generationSchema } from '../../src/store/postgres/generation-schema.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { currentSnapshotPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations, unpublishedOrganizations } from '../fixtures/dataset.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { PUBLISHING_BACKENDS } from '../helpers/publishing-backends.ts';
import { postgresSuite, quietLog, temporaryDatabase, testSettings } from '../helpers/postgres.ts';

/**
 * `/changes` over a line of publishes that add, change, remove, unpublish and bring organizations
 * back, asked since every earlier version after each publish. What each feed must hold is worked out
 * from the organizations each version served (their full documents, `last_modified` included), never
 * from the server's history: the removals are exactly those served then and not now, the organizations
 * exactly those served now whose document differs from then (or that were not served then), and the
 * counts of the `changes` line are the numbers of those lines.
 */

type Served = Map<string, { external_identifier: string }>;

const base = new Map(publishedOrganizations.map((organization) => [organization.externalId, organization]));
const extra = (externalId: string, name: string): OrganizationRecord => ({ ...publishedOrganizations[1]!, externalId, name, additionalWebsites: undefined, tags: [] });
const added = new Map([extra('NEW-1', 'First Newcomer Shelter'), extra('NEW-2', 'Second Newcomer Pantry')].map((organization) => [organization.externalId, organization]));

/** A dataset of these organizations (external ids), each as the fixture has it unless changed here. */
function dataset(externalIds: readonly string[], changes: Record<string, Partial<OrganizationRecord>> = {}): DatasetInput {
  const organizations = externalIds.map((externalId) => ({ ...(base.get(externalId) ?? added.get(externalId)!), ...changes[externalId] }));
  return fixtureDataset({ organizations: [...organizations, ...unpublishedOrganizations] });
}

const all = [...base.keys()];
const without = (...gone: string[]) => all.filter((externalId) => !gone.includes(externalId));

/** Each publish, with what it does to the one before. */
const PUBLISHES: { what: string; input: DatasetInput }[] = [
  { what: 'the fixture', input: dataset(all) },
  { what: 'NEW-1 and NEW-2 added, NAT-003 changed, NAT-010 removed', input: dataset([...without('NAT-010'), 'NEW-1', 'NEW-2'], { 'NAT-003': { description: 'Changed' } }) },
  {
    what: 'NEW-1 removed (added after the first), NAT-010 back, NAT-008 unpublished, NAT-004 changed',
    input: dataset([...all, 'NEW-2'], { 'NAT-003': { description: 'Changed' }, 'NAT-008': { status: 'unpublished' }, 'NAT-004': { description: 'Changed too' } }),
  },
  {
    what: 'NAT-010 removed again, NEW-2 removed, NAT-003 changed back',
    input: dataset(without('NAT-010'), { 'NAT-008': { status: 'unpublished' }, 'NAT-004': { description: 'Changed too' } }),
  },
  { what: 'NEW-1 back, NAT-008 published again, NAT-020 removed', input: dataset([...without('NAT-010', 'NAT-020'), 'NEW-1'], { 'NAT-004': { description: 'Changed too' } }) },
  { what: 'NEW-1 removed again, NAT-001 removed', input: dataset(without('NAT-010', 'NAT-020', 'NAT-001'), { 'NAT-004': { description: 'Changed too' } }) },
  { what: 'NAT-002 changed, nothing removed', input: dataset(without('NAT-010', 'NAT-020', 'NAT-001'), { 'NAT-004': { description: 'Changed too' }, 'NAT-002': { name: 'Renamed Shelter' } }) },
  { what: 'NAT-010, NAT-020, NAT-001 and NEW-2 back', input: dataset([...all, 'NEW-2'], { 'NAT-004': { description: 'Changed too' }, 'NAT-002': { name: 'Renamed Shelter' } }) },
];

async function served(app: FastifyInstance): Promise<Served> {
  const response = await app.inject(`${API}/organizations?format=ndjson&full=true`);
  assert.equal(response.statusCode, 200);
  const items = response.body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id: string; external_identifier: string });
  return new Map(items.map((item) => [item.id, item]));
}

async function feed(app: FastifyInstance, since: string) {
  const response = await app.inject(`${API}/changes?since=${since}`);
  assert.equal(response.statusCode, 200, response.body);
  const lines = response.body.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; [type: string]: any });
  const of = (type: string) => lines.filter((line) => line.type === type).map((line) => line[type]);
  return { counts: lines[0]!.changes, removed: of('removed_organization'), organizations: of('organization'), end: lines.at(-1)! };
}

const externalIds = (ids: Iterable<string>, from: Served) => [...ids].map((id) => from.get(id)!.external_identifier).sort();

for (const backend of PUBLISHING_BACKENDS) {
  describe(`/changes over a line of publishes, on ${backend.name}`, backend.options, () => {
    it('removes exactly the organizations of the version asked about that are gone, and counts what it sends', async () => {
      const server = await backend.start();
      const versions: { version: string; publishedAt: string; organizations: Served }[] = [];
      try {
        for (const [index, { what, input }] of PUBLISHES.entries()) {
          const publishedAt = new Date(Date.UTC(2026, 0, index + 1));
          const { version } = await server.publish(input, publishedAt);
          const stores = await server.stores();
          const app = await buildApp({ stores, logLevel: 'silent' });
          try {
            const now = await served(app);
            versions.push({ version, publishedAt: publishedAt.toISOString(), organizations: now });
            for (const since of versions) {
              const context = `after publish ${index + 1} (${what}), since the version published ${since.publishedAt}`;
              const expectedRemoved = [...since.organizations.keys()].filter((id) => !now.has(id));
              const expectedChanged = [...now.keys()].filter((id) => !isDeepStrictEqual(now.get(id), since.organizations.get(id)));
              const changes = await feed(app, since.version);
              assert.deepEqual(
                changes.removed.map((removed) => removed.external_identifier).sort(),
                externalIds(expectedRemoved, since.organizations),
                `removals ${context}`,
              );
              assert.equal(new Set(changes.removed.map((removed) => removed.id)).size, changes.removed.length, `each removal once ${context}`);
              assert.deepEqual(changes.organizations.map((organization) => organization.external_identifier).sort(), externalIds(expectedChanged, now), `organizations ${context}`);
              for (const organization of changes.organizations) assert.deepEqual(organization, now.get(organization.id), `the document served now ${context}`);
              assert.deepEqual(
                [changes.counts.organizations_changed, changes.counts.organizations_removed],
                [changes.organizations.length, changes.removed.length],
                `counts ${context}`,
              );
              assert.equal(changes.end.type, 'end');
            }
          } finally {
            await app.close();
          }
        }
        assert.equal(new Set(versions.map((each) => each.version)).size, PUBLISHES.length, 'each publish is a new version');
      } finally {
        await server.dispose();
      }
    });
  });
}

/**
 * A live dataset of format 12 says nothing of since when it served each organization: the line goes
 * on, each of its organizations and removals taken as served since the line's oldest version.
 */
const UPGRADE = [PUBLISHES[0]!.input, PUBLISHES[1]!.input, dataset([...without('NAT-010', 'NAT-001'), 'NEW-2'], { 'NAT-003': { description: 'Changed' } })];
const upgradeTime = (index: number) => new Date(Date.UTC(2026, 1, index + 1));

async function assertCarriedFromFormat12(app: FastifyInstance, versions: readonly string[]) {
  const removedSince = async (version: string) => (await feed(app, version)).removed.map((removed) => removed.external_identifier).sort();
  // NEW-1 was added by the second publish; format 12 did not say so, so a client of the first is told it is gone too.
  assert.deepEqual(await removedSince(versions[0]!), ['NAT-001', 'NAT-010', 'NEW-1']);
  assert.deepEqual(await removedSince(versions[1]!), ['NAT-001', 'NEW-1']);
}

describe('/changes after an upgrade from format 12', () => {
  it('SQLite: carries the line on, each organization taken as served since its oldest version', async () => {
    const data = temporaryDirectory();
    try {
      const versions: string[] = [];
      for (const [index, input] of UPGRADE.entries()) {
        if (index === 2) asFormat12(currentSnapshotPath(data.path)!);
        versions.push((await publishDataset(input, data.path, { now: () => upgradeTime(index) })).version);
      }
      const app = await buildApp({ stores: fixedStore(new SqliteStore(currentSnapshotPath(data.path)!)), logLevel: 'silent' });
      try {
        await assertCarriedFromFormat12(app, versions);
      } finally {
        await app.close();
      }
    } finally {
      data.remove();
    }
  });

  it('PostgreSQL: carries the line on, each organization taken as served since its oldest version', postgresSuite, async () => {
    const database = await temporaryDatabase();
    try {
      const versions: string[] = [];
      for (const [index, input] of UPGRADE.entries()) {
        if (index === 2) await generationAsFormat12(database.url);
        versions.push((await publishToPostgres(input, { url: database.url, migrate: true }, { now: () => upgradeTime(index) })).version);
      }
      const stores = await PostgresStores.open(testSettings(database.url), quietLog);
      const app = await buildApp({ stores, logLevel: 'silent' });
      try {
        await assertCarriedFromFormat12(app, versions);
      } finally {
        await app.close();
      }
    } finally {
      await database.drop();
    }
  });
});

/** A snapshot made as format 12 had it: without `added_at`. */
function asFormat12(snapshot: string): void {
  const db = new DatabaseSync(snapshot);
  try {
    db.exec("ALTER TABLE organizations DROP COLUMN added_at; ALTER TABLE removed_organizations DROP COLUMN added_at; UPDATE dataset SET value = '12' WHERE key = 'format'");
  } finally {
    db.close();
  }
}

/** The live generation made as format 12 had it. */
async function generationAsFormat12(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { generation } = (await client.query<{ generation: string }>('SELECT generation FROM hsds.live')).rows[0]!;
    const schema = generationSchema(generation);
    await client.query(`ALTER TABLE ${schema}.organizations DROP COLUMN added_at; ALTER TABLE ${schema}.removed_organizations DROP COLUMN added_at; UPDATE hsds.generations SET format = 12 WHERE id = ${Number(generation)}`);
  } finally {
    await client.end();
  }
}
