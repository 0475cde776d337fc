import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { organizationId, taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';
import type { Store } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations, unpublishedOrganizations } from '../fixtures/dataset.ts';

/** What every Store backend must answer for the fixture dataset. Run by one test file per backend. */
export function describeStoreContract(backend: string, open: (input: DatasetInput) => Promise<{ store: Store; dispose: () => Promise<void> }>): void {
  describe(`Store contract: ${backend}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ store, dispose } = await open(fixtureDataset()));
    });
    after(() => dispose());

    it('reports the dataset version and counts', async () => {
      const info = await store.info();
      assert.match(info.version, /^[0-9a-f]{16}$/);
      assert.ok(!Number.isNaN(Date.parse(info.publishedAt)));
      assert.deepEqual([info.organizations, info.taxonomies, info.taxonomyTerms], [publishedOrganizations.length, 2, 30]);
    });

    it('returns organizations by position range, ready as JSON', async () => {
      const all = await store.organizations({}, { first: 1, count: 100 });
      assert.equal(all.total, publishedOrganizations.length);
      const middle = await store.organizations({}, { first: 5, count: 3 });
      assert.deepEqual(middle.items, all.items.slice(4, 7));
      assert.deepEqual((await store.organizations({}, { first: 999, count: 3 })).items, []);
      assert.equal(JSON.parse(all.items[0]!).name, 'alpha shelter');
    });

    it('looks up published organizations only', async () => {
      const found = await store.organization(organizationId('NAT-001'));
      assert.equal(JSON.parse(found!).external_identifier, 'NAT-001');
      assert.equal(await store.organization(organizationId(unpublishedOrganizations[0]!.externalId)), undefined);
      assert.equal(await store.organization('not-an-id'), undefined);
    });

    it('finds the id of a published organization by its native id', async () => {
      assert.equal(await store.organizationIdByNativeId('NAT-001'), organizationId('NAT-001'));
      assert.equal(await store.organizationIdByNativeId(unpublishedOrganizations[0]!.externalId), undefined);
      assert.equal(await store.organizationIdByNativeId('nat-001'), undefined, 'native ids are exact');
    });

    it('pages taxonomies and terms, filtered by taxonomy', async () => {
      assert.deepEqual((await store.taxonomies({}, { first: 1, count: 10 })).items.map((json) => JSON.parse(json).code), ['Colors', 'things']);
      const colors = await store.taxonomyTerms({ taxonomyId: taxonomyId('Colors') }, { first: 2, count: 2 });
      assert.equal(colors.total, 7);
      assert.deepEqual(colors.items.map((json) => JSON.parse(json).code), ['green', 'blue']);
      assert.equal((await store.taxonomyTerms({}, { first: 1, count: 1 })).total, 30);
      assert.equal(JSON.parse((await store.taxonomyTerm(taxonomyTermId('Colors', 'red')))!).taxonomy_detail.code, 'Colors');
      assert.equal(JSON.parse((await store.taxonomy(taxonomyId('things')))!).code, 'things');
    });

    it('resolves taxonomies by id or code, case-insensitively', async () => {
      assert.deepEqual(await store.findTaxonomy('colors'), { id: taxonomyId('Colors'), code: 'Colors' });
      assert.deepEqual(await store.findTaxonomy(taxonomyId('things').toUpperCase()), { id: taxonomyId('things'), code: 'things' });
      assert.equal(await store.findTaxonomy('nope'), undefined);
      assert.deepEqual(await store.taxonomyCodes(), ['Colors', 'things']);
    });
  });
}
