import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { defaultDatasetSample } from '../helpers/default-dataset-sample.ts';
import { onBothStores } from '../helpers/sample-stores.ts';

/**
 * Ranking pinned on real names: the IRS file of Wyoming (about 6,000 organizations), as shipped, on
 * both stores. The names are the IRS's; the searches are typed as people type them.
 */

async function names(store: Store, search: string, count = 3): Promise<{ total: number; names: string[]; suggestion?: string }> {
  const page = await store.organizations({ search: [search] }, { first: 1, count });
  return { total: page.total, names: page.items.map((json) => (JSON.parse(json) as { name: string }).name), suggestion: page.suggestion };
}

onBothStores('search ranking on real names', () => defaultDatasetSample(), (store) => {

  it('puts the exact name first, ahead of names holding more words', async () => {
    const { names: found } = await names(store(), 'boys & girls club of douglas', 2);
    assert.deepEqual(found, ['BOYS & GIRLS CLUB OF DOUGLAS', 'BOYS & GIRLS CLUB OF DOUGLAS FOUNDATION']);
    assert.equal((await names(store(), 'humane society', 1)).names[0], 'CASPER HUMANE SOCIETY', 'humane societies first, not SOCIETY FOR HUMAN RESOURCE MANAGEMENT');
  });

  it('reads & as and, and needs no filler words', async () => {
    const withAmpersand = await names(store(), 'boys & girls club of douglas');
    const withAnd = await names(store(), 'boys and girls club douglas');
    assert.deepEqual(withAnd, withAmpersand);
    assert.deepEqual((await names(store(), 'casper antique and collectors club', 1)).names, ['CASPER ANTIQUE & COLLECTORS CLUB']);
  });

  it('forgives a typo in a long word', async () => {
    assert.deepEqual(await names(store(), 'casper humane socety', 20), await names(store(), 'casper humane society', 20));
    assert.equal((await names(store(), 'casper humane socety', 1)).names[0], 'CASPER HUMANE SOCIETY');
    assert.equal((await names(store(), 'soroptimist internatonal', 1)).names[0], 'SOROPTIMIST INTERNATIONAL OF THE AMERICAS INC');
  });

  it('completes an unfinished last word, and reads 4-H, 4 H and 4h alike', async () => {
    assert.deepEqual((await names(store(), 'goshen county 4h found', 1)).names, ['GOSHEN COUNTY 4-H FOUNDATION INC']);
    assert.deepEqual((await names(store(), 'goshen county 4-h foundation', 1)).names, ['GOSHEN COUNTY 4-H FOUNDATION INC']);
    assert.deepEqual(await names(store(), 'goshen county 4 h foundation', 10), await names(store(), 'goshen county 4-h foundation', 10));
  });

  it('ranks names holding the words as typed before names holding another form of them', async () => {
    assert.deepEqual((await names(store(), 'veteran', 2)).names, ['VETERAN BUILDING CHARITIES CORPORATION', 'VETERAN VILLAGE - AMNACS']);
    const veterans = await store().organizations({ search: ['veterans'] }, { first: 1, count: 100 });
    const texts = veterans.items.map((json) => {
      const { name, alternate_name: alternateName = '', description = '' } = JSON.parse(json) as { name: string; alternate_name?: string; description?: string };
      return { name, text: `${name} ${alternateName} ${description}`.toUpperCase() };
    });
    const holding = texts.filter(({ text }) => /\bVETERANS?\b|\bVFW\b/.test(text));
    assert.equal(holding.length, 81, 'both forms match');
    assert.deepEqual(texts.slice(0, 81), holding, 'the organizations holding the word come first, then those of the categories it names');
    assert.deepEqual(texts.slice(0, 20).filter(({ name }) => !/\bVETERANS\b/.test(name)), []);
  });

  it('ranks names under the term most matches are classified under ahead of names alike', async () => {
    const page = await store().organizations({ search: ['booster club'] }, { first: 1, count: 9 });
    const found = page.items.map((json) => JSON.parse(json) as { name: string; classifications?: { code: string }[] });
    const codes = found.map((organization) => organization.classifications?.map((term) => term.code).join(' '));
    // 8 of the 38 booster clubs are B11 (Single Organization Support); BOBCAT BOOSTER CLUB (B12) has fewer words than most of them.
    assert.deepEqual(codes.slice(0, 8), Array(8).fill('B11'));
    assert.deepEqual([found[8]!.name, codes[8]], ['BOBCAT BOOSTER CLUB', 'B12']);
  });

  it('corrects short words only when the search matches nothing as typed, and else suggests a spelling that matches', async () => {
    assert.deepEqual((await names(store(), 'boys & girs club douglas', 1)).names, ['BOYS & GIRLS CLUB OF DOUGLAS']);
    const art = await names(store(), 'art', 50);
    assert.ok(art.total > 0 && art.names.every((name) => /\bART/.test(name)), 'a short word some name holds is not corrected (only completed, as the last word)');
    // No name holds every word, nor every word but a common one (casper, humane): the page is empty, and suggests the spelling that finds the organization.
    const page = await names(store(), 'casper humane sosiaty', 1);
    assert.deepEqual({ total: page.total, suggestion: page.suggestion }, { total: 0, suggestion: 'casper humane society' });
    const nothingClose = await names(store(), 'casper humane socity club');
    assert.equal(nothingClose.suggestion, undefined, 'its spellings find nothing either');
    assert.equal((await names(store(), 'casper humane society', 1)).suggestion, undefined, 'no suggestion when a name holds every word');
  });

  it('follows few full matches with the names lacking only a common word of the search', async () => {
    // One organization holds all three words. Casper is held by many names (a common word here), humane
    // and society by fewer: the partial matches are the humane societies elsewhere (not human: search-text.ts, KEPT_APART).
    const page = await store().organizations({ search: ['casper humane society'] }, { first: 1, count: 1000 });
    const found = page.items.map((json) => JSON.parse(json) as { name: string; alternate_name?: string });
    assert.equal(found[0]!.name, 'CASPER HUMANE SOCIETY');
    const partial = found.slice(1).map((organization) => `${organization.name} | ${organization.alternate_name ?? ''}`);
    assert.ok(partial.length > 5 && partial.length === page.total - 1);
    assert.ok(partial.every((names) => /\bHUMANE\b/.test(names) && /\bSOCIETY\b/.test(names) && !/\bCASPER\b/.test(names)), 'humane societies, none in Casper');
    // Twenty full matches or more have no partial matches: the organizations of the category the words name follow them.
    const many = await store().organizations({ search: ['historical society'] }, { first: 1, count: 1000 });
    const manyFound = many.items.map((json) => JSON.parse(json) as { name: string; classifications?: { code: string }[] });
    const holding = manyFound.filter(({ name }) => /\bHISTORIC/.test(name) && /\bSOCIETY\b/.test(name));
    assert.ok(holding.length >= 20 && many.total === manyFound.length);
    assert.deepEqual(manyFound.slice(0, holding.length), holding);
    assert.deepEqual(many.categories?.map((term) => `${term.taxonomy}:${term.code}`), ['ntee:A82']);
    assert.deepEqual(manyFound.slice(holding.length).filter((organization) => !organization.classifications?.some((term) => term.code === 'A82')), [], 'no partial matches');
    // A search of one word has none.
    assert.equal((await names(store(), 'zzyzx')).total, 0);
  });
});
