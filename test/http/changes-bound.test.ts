import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DatasetInput, OrganizationRecord } from '../../src/hsds/records.ts';
import { buildApp } from '../../src/http/app.ts';
import { REMOVALS_ALWAYS_KEPT } from '../../src/build/history.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API } from '../helpers/app.ts';
import { PUBLISHING_BACKENDS } from '../helpers/publishing-backends.ts';

/**
 * The changes feed keeps no more removals than a copy of the dataset would read: a version whose
 * clients would be sent more removals than the dataset holds organizations (or than
 * REMOVALS_ALWAYS_KEPT) leaves the line, they copy afresh (410), and the snapshot keeps nothing for
 * them. Here 2,400 organizations, then 1,200 of them (1,200 removals: kept, as many as it holds),
 * then 4 (1,196 more: the line starts again), on both stores.
 */

const organization = (index: number): OrganizationRecord => ({ ...publishedOrganizations[1]!, externalId: `BIG-${index}`, name: `Organization Number ${index}`, additionalWebsites: undefined, tags: [] });
const datasetOf = (count: number): DatasetInput => fixtureDataset({ organizations: Array.from({ length: count }, (_, index) => organization(index)) });

for (const backend of PUBLISHING_BACKENDS) {
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
