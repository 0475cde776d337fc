import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { CategoryMatcher } from '../../src/store/search-categories.ts';
import type { CategoryTerm } from '../../src/store/search-categories.ts';
import { Vocabulary } from '../../src/store/search-vocabulary.ts';
import type { Store } from '../../src/store/store.ts';
import { defaultDatasetSample } from '../helpers/default-dataset-sample.ts';
import { onBothStores } from '../helpers/sample-stores.ts';

/** The NTEE codes as the bundled data has them, at positions of their own: the matcher reads only names and codes. */
const ntee = (parse(readFileSync('data/ntee/ntee_codes.csv'), { columns: true }) as { code: string; title: string }[]).map(
  (row, index): CategoryTerm => ({ position: index + 1, taxonomyPosition: 1, code: row.code, name: row.title }),
);
const positionOf = (code: string) => ntee.find((term) => term.code === code)!.position;
const taxonomies = [{ position: 1, id: 'ntee-id', code: 'ntee' }];
const lists = {
  phrases: [
    { phrase: 'rent', terms: ['ntee:L80'] },
    { phrase: 'eviction', terms: ['ntee:L80', 'ntee:I80'] },
    { phrase: 'food', terms: ['ntee:K31', 'ntee:K30'] },
    { phrase: 'seniors', terms: ['ntee:P81'] },
    { phrase: 'clases de inglés', terms: ['NTEE:B60'] },
    { phrase: 'legal', terms: ['ntee:I80'] },
    { phrase: 'money', terms: ['ntee:P60'] },
    { phrase: 'escuela para adultos', terms: ['ntee:B60'] },
    { phrase: 'not in this dataset', terms: ['oe_services:1101'] },
  ],
  filler: ['help', 'free', 'near', 'me', 'de', 'ayuda'],
};
/** Words of organization names: `honey` is spelt right, many names hold it. */
const nameWords = new Vocabulary([{ word: 'honey', token: 'honey', organizations: 120 }]);
const matcher = new CategoryMatcher(taxonomies, ntee, nameWords, lists);
const groups = (search: string) => matcher.match([search])?.groups.map((group) => group.terms);

describe('what a search names as categories', () => {
  it('reads every word through the everyday words, filler passed over', () => {
    assert.deepEqual(groups('rent help'), [[positionOf('L80')]]);
    assert.deepEqual(groups('Free food near me'), [[positionOf('K31'), positionOf('K30')]]);
    assert.deepEqual(groups('ayuda: clases de ingles'), [[positionOf('B60')]], 'accents, filler and case as the index reads them');
    assert.deepEqual(matcher.match(['eviction help'])?.terms, [positionOf('L80'), positionOf('I80')]);
    assert.deepEqual(matcher.match(['evicton hlp'])?.terms, undefined, 'a short word is not corrected');
    assert.deepEqual(matcher.match(['evicton'])?.terms, [positionOf('L80'), positionOf('I80')], 'a word of 5 letters or more one edit from a word of the lists is read as it');
    assert.deepEqual(matcher.match(['evicton help'])?.terms, [positionOf('L80'), positionOf('I80')]);
    assert.equal(matcher.match(['evcton']), undefined, 'two edits only from 9 letters, as names are corrected');
    assert.deepEqual(groups('monney'), [[positionOf('P60')]]);
    assert.equal(groups('honey'), undefined, 'a word many names hold is spelt right');
  });

  it('asks for each need of a search of two', () => {
    assert.deepEqual(groups('food for seniors'), [[positionOf('K31'), positionOf('K30')], [positionOf('P81')]]);
    // What follows "for" says whom (or what) the need is for: it orders the need's organizations.
    assert.deepEqual(matcher.match(['food for seniors'])?.groups.map((group) => group.who), [false, true]);
    assert.deepEqual(matcher.match(['seniors food'])?.groups.map((group) => group.who), [false, false]);
    assert.deepEqual(matcher.match(['help for seniors'])?.groups.map((group) => group.who), [false], 'nothing before it to order');
    assert.deepEqual(groups('escuela para adultos'), [[positionOf('B60')]], 'a phrase holding para is read whole');
  });

  it('never lets one word stand for a search of several', () => {
    assert.equal(groups('legal aid society of cleveland'), undefined);
    assert.equal(groups('rent a center'), undefined);
    assert.equal(groups('help'), undefined, 'filler alone names nothing');
    // Of three words or more, two thirds must be read: a sentence may hold a word the lists do not know.
    assert.deepEqual(groups('rent and food tonight'), [[positionOf('L80')], [positionOf('K31'), positionOf('K30')]]);
    assert.equal(groups('rent payment tonight'), undefined, 'one word of three');
    assert.equal(groups('legal clinic of cheyenne'), undefined, 'one word of three');
  });

  it('reads term names when no everyday word fits: every word in the name, and a part of the name among the words', () => {
    assert.deepEqual(groups('historical societies'), [[positionOf('A82')]]);
    assert.deepEqual(groups('food pantries'), [[positionOf('K31')]], 'Food Banks & Pantries names (food) pantries');
    assert.ok(groups('legal services')![0]!.includes(positionOf('I80')));
    assert.equal(groups('banks pantries agriculture'), undefined, 'words of two names');
  });

  it('leaves out what the dataset does not hold', () => {
    assert.equal(groups('not in this dataset'), undefined);
  });
});

async function page(store: Store, search: string, count: number, filter = {}) {
  const result = await store.organizations({ search: [search], ...filter }, { first: 1, count });
  return { ...result, organizations: result.items.map((json) => JSON.parse(json) as { name: string; classifications?: { code: string }[] }) };
}

/** On real names (the IRS file of Wyoming, as shipped, with NTEE and Open Eligibility and the bundled lists), on both stores. */
onBothStores('search by categories on real names', () => defaultDatasetSample(), (store) => {

  it('follows the name matches with the organizations of the categories, and says which', async () => {
    const veterans = await page(store(), 'veterans', 1000);
    assert.ok(veterans.categories !== undefined && veterans.categories.length > 0);
    assert.deepEqual(veterans.categories.map((term) => `${term.taxonomy}:${term.code} ${term.name}`), ['ntee:W30 Military & Veterans Organizations', 'oe_situations:20010 Veterans'], 'the terms the everyday words list gives');
    const codes = new Set(veterans.categories.map((term) => term.code));
    const firstCategoryOnly = veterans.organizations.findIndex(({ name, classifications }) => !/VETERAN|VFW/.test(name) && classifications?.some((term) => codes.has(term.code)));
    assert.ok(firstCategoryOnly > 20, `name matches first (${firstCategoryOnly})`);
    assert.equal(veterans.total, veterans.organizations.length);
    assert.equal(new Set(veterans.items).size, veterans.items.length, 'no organization twice');
  });

  it('pages, counts and filters the category matches as one list', async () => {
    const all = await page(store(), 'veterans', 1000);
    const pages: string[] = [];
    for (let first = 1; first <= all.total; first += 7) pages.push(...(await store().organizations({ search: ['veterans'] }, { first, count: 7 })).items);
    assert.deepEqual(pages, all.items);
    const streamed: string[] = [];
    for await (const batch of store().allOrganizations({ search: ['veterans'] })) streamed.push(...batch);
    assert.deepEqual(streamed, all.items);
    const facets = await store().organizationFacets({ search: ['veterans'] }, [{ kind: 'tax_status' }]);
    assert.equal(facets.tax_status!.reduce((sum, value) => sum + value.count, 0), all.total);
    const c19 = await page(store(), 'veterans', 1000, { taxStatus: '501(c)(19)' });
    assert.ok(c19.total > 0 && c19.total < all.total);
    assert.deepEqual(c19.items, all.items.filter((json) => (JSON.parse(json) as { tax_status?: string }).tax_status === '501(c)(19)'));
  });

  /** The organizations under these terms of a page's categories or below them, as the store lists them. */
  const under = async (categories: readonly { id: string; taxonomy: string; code: string }[], codes: readonly string[]) => {
    const ids = new Set<string>();
    for (const term of categories.filter((category) => codes.includes(`${category.taxonomy}:${category.code}`))) {
      const list = await store().organizations({ taxonomyTermId: term.id, includeDescendants: true }, { first: 1, count: 100_000 });
      for (const json of list.items) ids.add((JSON.parse(json) as { id: string }).id);
    }
    return ids;
  };
  const idsOf = (items: readonly string[]) => items.map((json) => (JSON.parse(json) as { id: string }).id);
  const SENIORS = ['ntee:P81', 'oe_situations:20006'];
  /** A search of food and seniors: its page, and the organizations under its food terms and under its seniors terms. */
  const foodAndSeniors = async (search: string) => {
    const found = await page(store(), search, 1000);
    const named = found.categories!.map((term) => `${term.taxonomy}:${term.code}`);
    assert.ok(named.includes('ntee:K30') && named.includes('ntee:P81'), named.join(' '));
    const seniors = await under(found.categories!, SENIORS);
    const food = await under(found.categories!, named.filter((code) => !SENIORS.includes(code)));
    return { found, seniors, food };
  };

  it('lists a search of two needs under either, those under both first, and no partial matches', async () => {
    const { found, seniors, food } = await foodAndSeniors('food seniors');
    const either = new Set([...food, ...seniors]);
    const all = idsOf(found.items);
    // No name holds both words: the organizations under either need, and no partial matches (names holding one word).
    const ids = all.slice(0, either.size);
    assert.deepEqual(new Set(ids), either);
    assert.equal(all.length, ids.length);
    const both = ids.map((id) => food.has(id) && seniors.has(id));
    assert.ok(both[0] === true && both.indexOf(false) > 0 && both.lastIndexOf(true) < both.indexOf(false), 'under both first');
  });

  it('reads what follows "for" as whom the need is for: it orders the need\'s organizations', async () => {
    const { found, seniors, food } = await foodAndSeniors('food for seniors');
    const ids = idsOf(found.items).slice(0, food.size);
    assert.deepEqual(new Set(ids), food, 'the food programs, not every senior center');
    const forSeniors = ids.map((id) => seniors.has(id));
    assert.ok(forSeniors[0] === true && forSeniors.lastIndexOf(true) < forSeniors.indexOf(false), 'those for seniors first');
  });

  it('has no categories where the words name none', async () => {
    const page1 = await page(store(), 'casper humane society', 5);
    assert.equal(page1.categories, undefined);
    assert.equal(page1.organizations[0]!.name, 'CASPER HUMANE SOCIETY');
  });
});
