import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { organizationId } from '../../src/hsds/ids.ts';
import type { DatasetInput, OrganizationRecord } from '../../src/hsds/records.ts';
import { buildApp } from '../../src/http/app.ts';
import { publishDataset } from '../../src/publish/publish.ts';
import type { PublishResult } from '../../src/publish/publish.ts';
import { currentSnapshotPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { openSnapshot } from '../../src/store/sqlite/snapshot-file.ts';
import { KEPT_VERSIONS } from '../../src/store/tables.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations, terms, unpublishedOrganizations } from '../fixtures/dataset.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

interface Line {
  type: string;
  [key: string]: any;
}

/** A data directory published to in turn, with an app serving whatever is live when asked. */
async function withPublishes(run: (publish: (input: DatasetInput, at: string) => Promise<PublishResult>, serve: <T>(use: (app: FastifyInstance) => Promise<T>) => Promise<T>, dataDir: string) => Promise<void>) {
  const data = temporaryDirectory();
  try {
    await run(
      (input, at) => publishDataset(input, data.path, { now: () => new Date(at) }),
      async (use) => {
        const app = await buildApp({ stores: fixedStore(new SqliteStore(currentSnapshotPath(data.path)!)), logLevel: 'silent' });
        try {
          return await use(app);
        } finally {
          await app.close();
        }
      },
      data.path,
    );
  } finally {
    data.remove();
  }
}

async function feed(app: FastifyInstance, since: string): Promise<Line[]> {
  const response = await app.inject(`${API}/changes?since=${since}`);
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8');
  assert.ok(response.body.endsWith('\n'));
  return response.body.trimEnd().split('\n').map((line) => JSON.parse(line) as Line);
}

const replace = (changes: Record<string, Partial<OrganizationRecord> | 'gone'>, extra: OrganizationRecord[] = []): OrganizationRecord[] => [
  ...publishedOrganizations.flatMap((organization) => {
    const change = changes[organization.externalId];
    if (change === 'gone') return [];
    return [change === undefined ? organization : { ...organization, ...change }];
  }),
  ...extra,
  ...unpublishedOrganizations,
];

const added: OrganizationRecord = { ...publishedOrganizations[1]!, externalId: 'NAT-NEW', name: 'Brand New Shelter', additionalWebsites: undefined, tags: [] };

/** Publishes A, B and C (see each), at these times. */
const TIMES = ['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'];
const datasets: DatasetInput[] = [
  fixtureDataset(),
  // B: NAT-003 changed, NAT-NEW added, NAT-010 removed, NAT-008 unpublished.
  fixtureDataset({ organizations: replace({ 'NAT-003': { description: 'Changed' }, 'NAT-010': 'gone', 'NAT-008': { status: 'unpublished' } }, [added]) }),
  // C: NAT-010 back, NAT-020 removed, NAT-NEW tagged with a new term (the taxonomies change).
  fixtureDataset({
    terms: [...terms, { taxonomy: 'Colors', code: 'white', name: 'WHITE', description: 'The color white' }],
    organizations: replace({ 'NAT-003': { description: 'Changed' }, 'NAT-020': 'gone', 'NAT-008': { status: 'unpublished' } }, [{ ...added, tags: [{ taxonomy: 'Colors', code: 'white' }] }]),
  }),
];

const organizationsOf = (lines: Line[]) => lines.filter((line) => line.type === 'organization').map((line) => line.organization.external_identifier).sort();
const removedOf = (lines: Line[]) => lines.filter((line) => line.type === 'removed_organization').map((line) => line.removed_organization);

describe('/changes', () => {
  it('streams what changed since each kept version: changes first, then taxonomies, removals, organizations, end', async () => {
    await withPublishes(async (publish, serve) => {
      const versions: PublishResult[] = [];
      for (const [index, input] of datasets.entries()) versions.push(await publish(input, TIMES[index]!));
      const [a, b, c] = versions as [PublishResult, PublishResult, PublishResult];
      await serve(async (app) => {
        const sinceA = await feed(app, a.version);
        assert.deepEqual(sinceA[0], {
          type: 'changes',
          changes: {
            since: { version: a.version, published_at: TIMES[0] },
            version: c.version,
            published_at: TIMES[2],
            taxonomies_changed: true,
            organizations_changed: 3,
            organizations_removed: 2,
          },
        });
        assert.deepEqual(sinceA.at(-1), { type: 'end', end: { version: c.version, published_at: TIMES[2] } });
        assert.deepEqual(
          sinceA.map((line) => line.type).filter((type, index, all) => type !== all[index - 1]),
          ['changes', 'taxonomy', 'taxonomy_term', 'removed_organization', 'organization', 'end'],
        );
        // NAT-010, removed by B, is back: an organization, no longer a removal.
        assert.deepEqual(organizationsOf(sinceA), ['NAT-003', 'NAT-010', 'NAT-NEW']);
        assert.deepEqual(removedOf(sinceA), [
          { id: organizationId('NAT-008'), external_identifier: 'NAT-008', removed_at: TIMES[1] },
          { id: organizationId('NAT-020'), external_identifier: 'NAT-020', removed_at: TIMES[2] },
        ]);
        assert.equal(sinceA.filter((line) => line.type === 'taxonomy').length, 2);
        assert.equal(sinceA.filter((line) => line.type === 'taxonomy_term').length, terms.length + 1);
        for (const line of sinceA.filter((line) => line.type === 'organization')) {
          assertHsds('organization', line.organization);
          assert.deepEqual(line.organization, (await getJson(app, `${API}/organizations/${line.organization.id}`)).body, 'the full document');
        }
        for (const line of sinceA.filter((line) => line.type === 'taxonomy')) assertHsds('taxonomy', line.taxonomy);
        for (const line of sinceA.filter((line) => line.type === 'taxonomy_term')) assertHsds('taxonomyTerm', line.taxonomy_term);

        const sinceB = await feed(app, b.version);
        assert.equal(sinceB[0]!.changes.organizations_changed, 2);
        assert.deepEqual(organizationsOf(sinceB), ['NAT-010', 'NAT-NEW']);
        assert.deepEqual(removedOf(sinceB).map((removed) => removed.external_identifier), ['NAT-020']);

        const sinceC = await feed(app, c.version);
        assert.deepEqual(sinceC.map((line) => line.type), ['changes', 'end']);
        assert.deepEqual(sinceC[0]!.changes, { since: { version: c.version, published_at: TIMES[2] }, version: c.version, published_at: TIMES[2], taxonomies_changed: false, organizations_changed: 0, organizations_removed: 0 });

        const everything = await feed(app, '0');
        assert.equal(everything[0]!.changes.since, null);
        const live = replace({ 'NAT-020': 'gone', 'NAT-008': 'gone' }, [added]).filter((organization) => organization.status === 'published').map((organization) => organization.externalId);
        assert.equal(everything[0]!.changes.organizations_changed, live.length);
        assert.deepEqual(organizationsOf(everything), live.sort());
        assert.equal(removedOf(everything).length, 0);

        const root = await getJson(app, `${API}/`);
        assert.equal(root.body.links.changes, `http://localhost${API}/changes?since=${c.version}`);

        // The bare path: what can be asked for, not the whole dataset.
        const kept = await getJson(app, `${API}/changes`);
        assert.equal(kept.status, 200);
        assert.equal(kept.headers['content-type'], 'application/json; charset=utf-8');
        const feedOf = (version: string) => `http://localhost${API}/changes?since=${version}`;
        assert.deepEqual(kept.body, {
          version: c.version,
          published_at: TIMES[2],
          versions: [c, b, a].map((version) => ({ version: version.version, published_at: version.publishedAt, changes: feedOf(version.version) })),
          links: { self: `http://localhost${API}/changes`, everything: feedOf('0') },
        });
      });
    });
  });

  it(`keeps the last ${KEPT_VERSIONS} versions, and the removals a client of one of them needs; an older version is a 410`, async () => {
    await withPublishes(async (publish, serve, dataDir) => {
      const first = await publish(datasets[0]!, '2026-01-01T00:00:00Z');
      const second = await publish(datasets[1]!, '2026-01-02T00:00:00Z');
      // Each publish changes NAT-001, so each is a new version.
      const later: PublishResult[] = [];
      for (let day = 3; day < KEPT_VERSIONS + 2; day++) {
        const input = fixtureDataset({ organizations: replace({ 'NAT-003': { description: 'Changed' }, 'NAT-010': 'gone', 'NAT-008': { status: 'unpublished' }, 'NAT-001': { description: `Day ${day}` } }, [added]) });
        later.push(await publish(input, `2026-01-${String(day).padStart(2, '0')}T00:00:00Z`));
      }
      assert.equal(new Set([first, second, ...later].map((result) => result.version)).size, KEPT_VERSIONS + 1);
      await serve(async (app) => {
        const tooOld = await getJson(app, `${API}/changes?since=${first.version}`);
        assert.equal(tooOld.status, 410);
        assert.equal(tooOld.headers['content-type'], 'application/problem+json; charset=utf-8');
        assert.equal(tooOld.headers['cache-control'], 'no-store', 'copy everything again: not to be repeated by a cache');
        assert.equal(tooOld.body.type, `http://localhost${API}/profile#version-not-kept`);
        assert.match(tooOld.body.detail, new RegExp(`^Version ${first.version} is not one whose changes this server keeps: it keeps those since at most the last ${KEPT_VERSIONS} versions it published, and none whose feed would remove more organizations than a copy holds; the oldest kept is ${second.version} of 2026-01-02T00:00:00.000Z\\. Copy everything again: http://localhost${API}/changes\\?since=0$`));
        const oldest = await feed(app, second.version);
        assert.deepEqual([oldest[0]!.changes.organizations_changed, oldest[0]!.changes.organizations_removed], [1, 0]);
        assert.equal((await getJson(app, `${API}/changes?since=0123456789abcdef`)).status, 410);
      });
      // The removals of the second publish concern only clients of the first, no longer kept.
      const snapshot = openSnapshot(currentSnapshotPath(dataDir)!);
      try {
        assert.equal((snapshot.prepare('SELECT count(*) AS n FROM removed_organizations').get() as { n: number }).n, 0);
        assert.equal((snapshot.prepare('SELECT count(*) AS n FROM dataset_versions').get() as { n: number }).n, KEPT_VERSIONS);
      } finally {
        snapshot.close();
      }
    });
  });

  it('publishes later than the live dataset even when the clock says otherwise, so no change is missed', async () => {
    await withPublishes(async (publish, serve) => {
      const first = await publish(datasets[0]!, '2026-05-01T00:00:00.000Z');
      const second = await publish(datasets[1]!, '2026-04-01T00:00:00.000Z');
      assert.equal(second.publishedAt, '2026-05-01T00:00:00.001Z');
      await serve(async (app) => assert.deepEqual(organizationsOf(await feed(app, first.version)), ['NAT-003', 'NAT-NEW']));
    });
  });

  it('400 for a since that is no version; HEAD without a body', async () => {
    await withPublishes(async (publish, serve) => {
      await publish(datasets[0]!, TIMES[0]!);
      await serve(async (app) => {
        for (const value of ['yesterday', '0123', '00', '0123456789ABCDEF0', '2026-01-01']) {
          const { status, body } = await getJson(app, `${API}/changes?since=${value}`);
          assert.equal(status, 400, value);
          assert.equal(body.invalid_params[0].name, 'since');
        }
        const head = await app.inject({ method: 'HEAD', url: `${API}/changes?since=0` });
        assert.equal(head.statusCode, 200);
        assert.equal(head.headers['content-type'], 'application/x-ndjson; charset=utf-8');
        assert.equal(head.body, '');
      });
    });
  });
});
