import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { organizationId, taxonomyId, taxonomyTermId, urlId } from '../../src/hsds/ids.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';
import type { Store } from '../../src/store/store.ts';
import { alphaShelterWebsites, fixtureDataset, publishedOrganizations, unpublishedOrganizations } from '../fixtures/dataset.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

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

    it('serves additional websites and attribute labels in the full form, not in list items', async () => {
      const id = organizationId('NAT-002');
      const detail = JSON.parse((await store.organization(id))!);
      assertHsds('organization', detail);
      const [labelled, unlabelled] = alphaShelterWebsites;
      assert.deepEqual(detail.additional_websites, [
        { id: urlId('NAT-002', labelled!.url), url: labelled!.url, label: 'Donate', organization_id: id },
        { id: unlabelled!.id, url: unlabelled!.url, organization_id: id },
      ]);
      assert.deepEqual(Object.keys(detail.additional_websites[0]), ['id', 'url', 'label', 'organization_id']);
      assert.deepEqual(Object.keys(detail).slice(-4), ['additional_websites', 'attributes', 'organization_identifiers', 'last_modified']);
      assert.deepEqual(detail.attributes.map((attribute: any) => [attribute.taxonomy_term.code, attribute.label]), [['B', 'Night shelter']]);
      const [listed] = (await store.organizations({}, { first: 1, count: 1 })).items;
      assert.equal(JSON.parse(listed!).id, id);
      assert.equal(JSON.parse(listed!).additional_websites, undefined);
      assert.deepEqual((await store.organizations({}, { first: 1, count: 1 }, { full: true })).items, [await store.organization(id)]);
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

    const collect = async (batches: AsyncIterable<string[]>) => {
      const items: string[] = [];
      for await (const batch of batches) items.push(...batch);
      return items;
    };

    it('filters organizations by term, taxonomy, search and modification time, combined with AND', async () => {
      const red = taxonomyTermId('Colors', 'red');
      const byTerm = await store.organizations({ taxonomyTermId: red }, { first: 1, count: 100 });
      assert.equal(byTerm.total, 6);
      assert.deepEqual((await store.organizations({ taxonomyTermId: red }, { first: 2, count: 2 })).items, byTerm.items.slice(1, 3));
      assert.equal((await store.organizations({ taxonomyId: taxonomyId('Colors') }, { first: 1, count: 1 })).total, 12);
      assert.equal((await store.organizations({ taxonomyId: taxonomyId('things'), taxonomyTermId: red }, { first: 1, count: 1 })).total, 0);
      assert.equal((await store.organizations({ taxonomyTermId: taxonomyTermId('Colors', 'nope') }, { first: 1, count: 1 })).total, 0);
      const search = await store.organizations({ search: ['shelter'] }, { first: 1, count: 10 });
      assert.deepEqual(search.items.map((json) => JSON.parse(json).name).sort(), ['Sigma Shelter', 'alpha shelter']);
      assert.equal(search.total, 2, 'a one-word total is the stored count of organizations holding the word');
      assert.deepEqual(await store.organizations({ search: ['Shelters'] }, { first: 2, count: 10 }), { total: 2, items: search.items.slice(1) });
      const unheard = await store.organizations({ search: ['unheardof'] }, { first: 1, count: 10 });
      assert.equal(unheard.total, 0);
      assert.deepEqual(unheard.items, []);
      assert.equal(unheard.suggestion, undefined, 'no name word is near enough to suggest another spelling');
      assert.equal((await store.organizations({ search: ['helps'], taxonomyTermId: red }, { first: 1, count: 10 })).total, 2);
      const { publishedAt } = await store.info();
      assert.equal((await store.organizations({ modifiedSince: publishedAt }, { first: 1, count: 1 })).total, publishedOrganizations.length);
      assert.equal((await store.organizations({ modifiedSince: '2999-01-01T00:00:00.000Z', taxonomyTermId: red }, { first: 1, count: 1 })).total, 0);
      const full = await store.organizations({ taxonomyTermId: red }, { first: 1, count: 1 }, { full: true });
      assert.deepEqual(full.items[0], await store.organization(JSON.parse(byTerm.items[0]!).id));
    });

    it('streams every item of a filtered list, in list order', async () => {
      const all = await store.organizations({}, { first: 1, count: 100 });
      assert.deepEqual(await collect(store.allOrganizations({})), all.items);
      const red = { taxonomyTermId: taxonomyTermId('Colors', 'red') };
      assert.deepEqual(await collect(store.allOrganizations(red, { full: true })), (await store.organizations(red, { first: 1, count: 100 }, { full: true })).items);
      assert.deepEqual(await collect(store.allOrganizations({ search: ['nothing'] })), []);
      assert.equal((await collect(store.allTaxonomyTerms({ topOnly: true }))).length, 26);
      assert.deepEqual((await collect(store.allTaxonomies({ search: ['demo'] }))).map((json) => JSON.parse(json).code), ['things']);
    });

    it('filters terms by parent, top level and search', async () => {
      const children = await store.taxonomyTerms({ parentId: taxonomyTermId('things', 'A') }, { first: 1, count: 10 });
      assert.deepEqual(children.items.map((json) => JSON.parse(json).code), ['F', 'K', 'P', 'U']);
      assert.equal((await store.taxonomyTerms({ topOnly: true, taxonomyId: taxonomyId('things') }, { first: 1, count: 1 })).total, 19);
      assert.deepEqual((await store.taxonomyTerms({ search: ['magenta'] }, { first: 1, count: 5 })).items.map((json) => JSON.parse(json).code), ['magenta']);
    });

    it('resolves terms by id or taxonomy:code', async () => {
      const red = { id: taxonomyTermId('Colors', 'red'), taxonomyId: taxonomyId('Colors') };
      assert.deepEqual(await store.findTaxonomyTerm(red.id), red);
      assert.deepEqual(await store.findTaxonomyTerm(red.id.toUpperCase()), red);
      assert.deepEqual(await store.findTaxonomyTerm('colors:red'), red);
      assert.deepEqual(await store.findTaxonomyTerm('Colors:RED'), red);
      assert.equal(await store.findTaxonomyTerm('Colors:purple'), undefined);
      assert.equal(await store.findTaxonomyTerm('red'), undefined);
    });

    it('resolves taxonomies by id or code, case-insensitively', async () => {
      assert.deepEqual(await store.findTaxonomy('colors'), { id: taxonomyId('Colors'), code: 'Colors' });
      assert.deepEqual(await store.findTaxonomy(taxonomyId('things').toUpperCase()), { id: taxonomyId('things'), code: 'things' });
      assert.equal(await store.findTaxonomy('nope'), undefined);
      assert.deepEqual(await store.taxonomyCodes(), ['Colors', 'things']);
    });
  });
}
