import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { DatasetInput, OrganizationRecord } from '../../src/hsds/records.ts';
import { buildApp } from '../../src/http/app.ts';
import { REMOVALS_ALWAYS_KEPT } from '../../src/build/history.ts';
import type { ChangesFromPrevious } from '../../src/build/history.ts';
import { publishDataset } from '../../src/publish/publish.ts';
import { publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { currentSnapshotPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import type { StoreProvider } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { postgresSuite, quietLog, temporaryDatabase, testSettings } from '../helpers/postgres.ts';

/**
 * The changes feed keeps no more removals than a copy of the dataset would read: a version whose
 * clients would be sent more removals than the dataset holds organizations (or than
 * REMOVALS_ALWAYS_KEPT) leaves the line, they copy afresh (410), and the snapshot keeps nothing for
 * them. Here 2,400 organizations, then 1,200 of them (1,200 removals: kept, as many as it holds),
 * then 4 (1,196 more: the line starts again), on both stores.
 */

const organization = (index: number): OrganizationRecord => ({ ...publishedOrganizations[1]!, externalId: `BIG-${index}`, name: `Organization Number ${index}`, additionalWebsites: undefined, tags: [] });
const datasetOf = (count: number): DatasetInput => fixtureDataset({ organizations: Array.from({ length: count }, (_, index) => organization(index)) });

interface Publisher {
  publish(input: DatasetInput, at: Date): Promise<{ version: string; fromPrevious: ChangesFromPrevious | undefined }>;
  stores(): Promise<StoreProvider>;
  /** The live snapshot's size in bytes, where there is a file. */
  size(): number | undefined;
  dispose(): Promise<void>;
}

const BACKENDS: { name: string; options: { skip?: string | boolean }; start: () => Promise<Publisher> }[] = [
  {
    name: 'SQLite',
    options: {},
    async start() {
      const data = temporaryDirectory();
      return {
        publish: async (input, at) => {
          const result = await publishDataset(input, data.path, { now: () => at });
          return { version: result.version, fromPrevious: result.fromPrevious };
        },
        stores: async () => fixedStore(new SqliteStore(currentSnapshotPath(data.path)!)),
        size: () => statSync(currentSnapshotPath(data.path)!).size,
        dispose: async () => data.remove(),
      };
    },
  },
  {
    name: 'PostgreSQL',
    options: postgresSuite,
    async start() {
      const database = await temporaryDatabase();
      return {
        publish: async (input, at) => {
          const result = await publishToPostgres(input, { url: database.url, migrate: true }, { now: () => at });
          return { version: result.version, fromPrevious: result.fromPrevious };
        },
        stores: () => PostgresStores.open(testSettings(database.url), quietLog),
        size: () => undefined,
        dispose: () => database.drop(),
      };
    },
  },
];

for (const backend of BACKENDS) {
  describe(`removals in the changes feed, bounded by the dataset, on ${backend.name}`, backend.options, () => {
    it('keeps them while they are fewer than the organizations served, and starts the line again when they are more', async () => {
      assert.ok(1_196 > REMOVALS_ALWAYS_KEPT && 1_200 >= REMOVALS_ALWAYS_KEPT);
      const server = await backend.start();
      try {
        const first = await server.publish(datasetOf(2_400), new Date('2026-03-01T00:00:00Z'));
        const second = await server.publish(datasetOf(1_200), new Date('2026-03-02T00:00:00Z'));
        assert.deepEqual([second.fromPrevious?.removed, second.fromPrevious?.versionsDropped], [1_200, 0]);
        let app = await buildApp({ stores: await server.stores(), logLevel: 'silent' });
        try {
          const response = await app.inject(`${API}/changes?since=${first.version}`);
          assert.equal(response.statusCode, 200);
          assert.equal(JSON.parse(response.body.split('\n')[0]!).changes.organizations_removed, 1_200);
        } finally {
          await app.close();
        }

        const third = await server.publish(datasetOf(4), new Date('2026-03-03T00:00:00Z'));
        assert.deepEqual([third.fromPrevious?.removed, third.fromPrevious?.versionsDropped], [1_196, 2]);
        app = await buildApp({ stores: await server.stores(), logLevel: 'silent' });
        try {
          for (const gone of [first, second]) assert.equal((await app.inject(`${API}/changes?since=${gone.version}`)).statusCode, 410);
          const kept = (await app.inject(`${API}/changes`)).json() as { versions: { version: string }[] };
          assert.deepEqual(kept.versions.map((version) => version.version), [third.version]);
          // What a client of the removed line does: copy afresh, 4 organizations.
          const copy = await app.inject(`${API}/changes?since=0`);
          assert.equal(JSON.parse(copy.body.split('\n')[0]!).changes.organizations_changed, 4);
        } finally {
          await app.close();
        }
        const size = server.size();
        if (size !== undefined) assert.ok(size < 1_000_000, `a snapshot of 4 organizations after 2,400: ${size} bytes`);
      } finally {
        await server.dispose();
      }
    });
  });
}
