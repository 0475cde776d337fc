import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import type { OrganizationRecord } from '../../src/hsds/records.ts';
import { RANKED_SEARCH_LIMIT } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, allItems, getJson, pathOf, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

const names = (body: any): string[] => body.contents.map((item: any) => item.name);
const byName = (list: string[]) => [...list].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));

/** Names of the fixture's published organizations whose index passes `keep` (hand-checked below). */
const fixtureNames = (keep: (index: number) => boolean) => byName(publishedOrganizations.filter((_, index) => keep(index)).map((organization) => organization.name));

describe('organization filters (fixture: colors on even indices, red when divisible by 4)', () => {
  const test = useTestApp();
  const get = (query: string) => getJson(test().app, `${API}/organizations?per_page=100&${query}`);

  it('taxonomy_term_id by id and by taxonomy:code gives exactly the tagged published organizations', async () => {
    const red = ['Delta Youth Club', 'Iota Library', 'Nu Literacy', 'Phi Farm', 'Rho Recovery', 'Zeta Food Bank'];
    assert.deepEqual(fixtureNames((index) => index % 4 === 0), red, 'the fixture is as described');
    for (const value of [taxonomyTermId('Colors', 'red'), 'Colors:red', 'colors:red', 'COLORS:RED', taxonomyTermId('Colors', 'red').toUpperCase()]) {
      const { status, body } = await get(`taxonomy_term_id=${encodeURIComponent(value)}`);
      assert.equal(status, 200, value);
      assert.deepEqual(names(body), red, value);
      assert.equal(body.total_items, 6);
      assertHsds('organizationList', body);
    }
    for (const item of (await get('taxonomy_term_id=Colors:red')).body.contents) {
      assert.ok(item.classifications.some((tag: any) => tag.code === 'red'));
    }
  });

  it('include_descendants=true widens taxonomy_term_id to the term and every term below it; alone it is a 400', async () => {
    // Things F, K, P, U and Z (every fifth letter) have parent A.
    const underA = new Set(['A', 'F', 'K', 'P', 'U', 'Z']);
    const expected = byName(publishedOrganizations.filter((organization) => organization.tags.some((tag) => tag.taxonomy === 'things' && underA.has(tag.code))).map((organization) => organization.name));
    const exact = await get('taxonomy_term_id=things:A');
    const subtree = await get('taxonomy_term_id=things:A&include_descendants=true');
    assert.deepEqual(names(subtree.body), expected);
    assert.ok(subtree.body.total_items > exact.body.total_items, `${subtree.body.total_items} > ${exact.body.total_items}`);
    assertHsds('organizationList', subtree.body);
    // A leaf's subtree is the leaf.
    assert.deepEqual(names((await get('taxonomy_term_id=things:F&include_descendants=true')).body), names((await get('taxonomy_term_id=things:F')).body));
    const alone = await get('include_descendants=true');
    assert.equal(alone.status, 400);
    assert.equal(alone.body.invalid_params[0].name, 'include_descendants');
  });

  it('taxonomy_id by id or code gives organizations with any term of the taxonomy', async () => {
    for (const value of [taxonomyId('Colors'), 'colors']) {
      const { body } = await get(`taxonomy_id=${value}`);
      assert.deepEqual(names(body), fixtureNames((index) => index % 2 === 0));
    }
    assert.equal((await get('taxonomy_id=things')).body.total_items, publishedOrganizations.length);
  });

  it('combines taxonomy_term_id and taxonomy_id with AND', async () => {
    assert.equal((await get('taxonomy_term_id=Colors:blue&taxonomy_id=Colors')).body.total_items, 6);
    const { status, body } = await get('taxonomy_term_id=things:A&taxonomy_id=Colors');
    assert.equal(status, 200);
    assert.equal(body.total_items, 0);
    assert.equal(body.empty, true);
  });

  it('400 for a term or taxonomy that names nothing, saying what is accepted', async () => {
    for (const [query, name] of [
      ['taxonomy_term_id=Colors:purple', 'taxonomy_term_id'],
      ['taxonomy_term_id=nope:red', 'taxonomy_term_id'],
      ['taxonomy_term_id=red', 'taxonomy_term_id'],
      [`taxonomy_term_id=${taxonomyTermId('Colors', 'purple')}`, 'taxonomy_term_id'],
      ['taxonomy_id=nope', 'taxonomy_id'],
    ]) {
      const { status, body } = await get(query!);
      assert.equal(status, 400, query);
      assert.equal(body.invalid_params[0].name, name, query);
    }
    assert.match((await get('taxonomy_id=nope')).body.detail, /Colors, things/);
  });

  it('search finds words in name, alternate name and description, by stem, without regard to case or accents', async () => {
    assert.deepEqual(names((await get('search=shelter')).body).sort(), ['Sigma Shelter', 'alpha shelter']);
    assert.deepEqual(names((await get('search=SHELTERS')).body).sort(), ['Sigma Shelter', 'alpha shelter']);
    assert.deepEqual(names((await get('search=Shélter')).body).sort(), ['Sigma Shelter', 'alpha shelter']);
    assert.deepEqual(byName(names((await get('search=helps%20people')).body)), fixtureNames((index) => index % 3 === 0));
    // "Zeta Org" is index 0's alternate name only.
    assert.deepEqual(byName(names((await get('search=org')).body)), fixtureNames((index) => index % 4 === 0));
    // No name holds both words: those holding one of them are partial matches.
    const clinic = names((await get('search=clinic')).body);
    assert.ok(clinic.length > 0);
    assert.deepEqual(names((await get('search=shelter%20clinic')).body).sort(), ['Sigma Shelter', 'alpha shelter', ...clinic].sort());
  });

  it('search takes punctuation, quotes and query syntax as plain text', async () => {
    for (const text of ['"shelter', "shelter's", 'shelter*', '(shelter)', 'shelter:', '-shelter', '^shelter', '{shelter}', 'shelter"" OR', '\\shelter', 'NEAR(shelter)']) {
      const { status, body } = await get(`search=${encodeURIComponent(text)}`);
      assert.equal(status, 200, text);
      if (!/OR|NEAR|'s/.test(text)) assert.deepEqual(names(body).sort(), ['Sigma Shelter', 'alpha shelter'], text);
    }
    assert.equal((await get(`search=${encodeURIComponent('shelter OR clinic')}`)).body.total_items, 0, 'OR is a word, not an operator');
    for (const text of [' "*" ', '\u0301', '\u0301\u0301 \u0308', '\u200b']) {
      const blank = await get(`search=${encodeURIComponent(text)}`);
      assert.equal(blank.body.total_items, publishedOrganizations.length, `a search without words (${JSON.stringify(text)}) is no search`);
    }
    assert.equal((await get(`search=${encodeURIComponent('he\u0301lps')}`)).body.total_items, 8, 'a combining mark is part of its word');
    assert.equal((await get(`search=${encodeURIComponent('😀'.repeat(200))}`)).status, 200, 'the length is counted in characters');
  });

  it('search combines with taxonomy filters, and pages and links stay consistent', async () => {
    const { body } = await get('search=helps&taxonomy_term_id=Colors:red');
    assert.deepEqual(byName(names(body)), fixtureNames((index) => index % 12 === 0));
    let page = (await getJson(test().app, `${API}/organizations?search=helps&per_page=3`)).body;
    assert.equal(page.total_items, 8);
    assert.equal(page.total_pages, 3);
    const seen: string[] = [...names(page)];
    while (page.links.next !== undefined) {
      assert.match(page.links.next, /search=helps/);
      page = (await getJson(test().app, pathOf(page.links.next))).body;
      seen.push(...names(page));
    }
    assert.equal(page.page_number, 3);
    assert.equal(page.size, 2);
    assert.deepEqual(seen.sort(), fixtureNames((index) => index % 3 === 0).sort());
  });

  it('400 for an over-long search', async () => {
    const { status, body } = await get(`search=${'a'.repeat(257)}`);
    assert.equal(status, 400);
    assert.equal(body.invalid_params[0].name, 'search');
    assert.equal((await get(`search=${Array.from({ length: 33 }, () => 'a').join('+')}`)).status, 400);
  });

  it('full=true lists the full documents, valid HSDS organizations', async () => {
    for (const value of ['true', '1']) {
      const { body } = await get(`full=${value}&taxonomy_term_id=Colors:red`);
      assert.equal(body.total_items, 6);
      for (const item of body.contents) {
        assert.ok(Array.isArray(item.attributes) && Array.isArray(item.organization_identifiers));
        assertHsds('organization', item);
        const single = await getJson(test().app, `${API}/organizations/${item.id}`);
        assert.deepEqual(item, single.body);
      }
    }
    for (const value of ['false', '0']) {
      const { body } = await get(`full=${value}`);
      assert.equal(body.contents[0].attributes, undefined);
    }
  });

  it('tax_status keeps the organizations with that tax status, compared by letters and digits in any case', async () => {
    const c3 = fixtureNames((index) => index % 3 === 0);
    assert.equal(c3.length, 8, 'the fixture is as described: 501(c)(3) on indices divisible by 3, 501(c)(4) one after');
    for (const value of ['501(c)(3)', '501c3', '501C3', ' 501 (c) (3) ', '501-c-3']) {
      const { status, body } = await get(`tax_status=${encodeURIComponent(value)}`);
      assert.equal(status, 200, value);
      assert.deepEqual(names(body), c3, value);
      assert.equal(body.total_items, 8, value);
      for (const item of body.contents) assert.equal(item.tax_status, '501(c)(3)', value);
    }
    assert.deepEqual(names((await get('tax_status=501c4')).body), fixtureNames((index) => index % 3 === 1));
    // Combined with the other filters by AND.
    assert.deepEqual(names((await get('tax_status=501c3&taxonomy_term_id=Colors:red')).body), fixtureNames((index) => index % 12 === 0));
    assert.deepEqual(byName(names((await get('tax_status=501c4&search=shelter')).body)), ['alpha shelter']);
    // A tax status no organization has is an empty list, not an error.
    for (const value of ['nothing', '501c5', '501c']) {
      const { status, body } = await get(`tax_status=${value}`);
      assert.equal(status, 200, value);
      assert.equal(body.total_items, 0, value);
      assert.deepEqual(body.contents, [], value);
    }
  });

  it('facets counts the whole filtered list per term at a depth and per tax status, most organizations first', async () => {
    // Expected counts, from the listed organizations themselves (format=ndjson) and the terms' parents.
    const terms = new Map<string, any>((await allItems(test().app, '/taxonomy_terms')).map((term) => [term.id, term]));
    const ancestorAt = (termId: string, depth: number): any => {
      const chain = [terms.get(termId)];
      while (chain[0].parent_id !== undefined) chain.unshift(terms.get(chain[0].parent_id));
      return chain[depth - 1];
    };
    const bySize = (a: any, b: any) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    const expected = async (query: string, taxonomy: string, depth: number) => {
      const counts = new Map<string, { term: any; count: number }>();
      for (const organization of await allItems(test().app, `/organizations?${query}`)) {
        const values = new Set(organization.classifications.filter((tag: any) => tag.taxonomy === taxonomy).map((tag: any) => ancestorAt(tag.taxonomy_term_id, depth)).filter((term: any) => term !== undefined));
        for (const term of values as Set<any>) counts.set(term.id, { term, count: (counts.get(term.id)?.count ?? 0) + 1 });
      }
      return [...counts.values()]
        .map(({ term, count }) => ({ key: term.code, id: term.id, code: term.code, name: term.name, count }))
        .sort(bySize)
        .map(({ key: _key, ...value }) => value);
    };
    const expectedTaxStatus = async (query: string) => {
      const counts = new Map<string, number>();
      for (const organization of await allItems(test().app, `/organizations?${query}`)) {
        if (organization.tax_status !== undefined) counts.set(organization.tax_status, (counts.get(organization.tax_status) ?? 0) + 1);
      }
      return [...counts].map(([value, count]) => ({ key: value, value, count })).sort(bySize).map(({ key: _key, ...value }) => value);
    };

    // Hand-checked: 8 of each tax status; red and blue on 6 each; Thing A's own organization and those of F, K, P and U below it.
    const paged = (query: string) => getJson(test().app, `${API}/organizations?${query}`);
    const { body: all } = await paged('facets=Colors,things:1,things:2,tax_status&per_page=1&page=2');
    assert.deepEqual(Object.keys(all.facets), ['Colors:1', 'things:1', 'things:2', 'tax_status']);
    assert.deepEqual(all.facets.tax_status, [{ value: '501(c)(3)', count: 8 }, { value: '501(c)(4)', count: 8 }]);
    assert.deepEqual(all.facets['Colors:1'].map((value: any) => [value.code, value.count]), [['blue', 6], ['red', 6]]);
    assert.deepEqual(all.facets['things:1'][0], { id: taxonomyTermId('things', 'A'), code: 'A', name: 'Thing A', count: 5 });
    assert.deepEqual(all.facets['things:2'].map((value: any) => [value.code, value.count]), [['F', 1], ['K', 1], ['P', 1], ['U', 1]]);
    assertHsds('organizationList', all);

    // The unfiltered list (counted at publish) and filtered ones (counted when asked) alike; never only the page.
    for (const query of ['', 'taxonomy_term_id=Colors:red', 'taxonomy_term_id=things:A&include_descendants=true', 'taxonomy_id=Colors', 'search=helps', 'search=shelter', 'tax_status=501c3', 'tax_status=501c4&taxonomy_id=things', 'modified_after=2000-01-01', 'modified_after=2999-01-01', 'tax_status=nothing']) {
      const { status, body } = await paged(`${query}&facets=colors:1,things:1,things:2,tax_status&per_page=2`);
      assert.equal(status, 200, query);
      assert.deepEqual(body.facets['Colors:1'], await expected(query, 'Colors', 1), `${query}: Colors:1`);
      assert.deepEqual(body.facets['things:1'], await expected(query, 'things', 1), `${query}: things:1`);
      assert.deepEqual(body.facets['things:2'], await expected(query, 'things', 2), `${query}: things:2`);
      assert.deepEqual(body.facets.tax_status, await expectedTaxStatus(query), `${query}: tax_status`);
      for (const values of Object.values<any[]>(body.facets)) for (const value of values) assert.ok(value.count >= 1, query);
    }
    // Deeper than the taxonomy goes: no values.
    assert.deepEqual((await get('facets=things:3')).body.facets, { 'things:3': [] });
    // Not asked for: not sent.
    assert.equal((await get('')).body.facets, undefined);
    assert.equal((await get('facets=,')).body.facets, undefined);
  });

  it('400 for facets naming no taxonomy of the dataset, a depth out of range, or more than 5', async () => {
    for (const value of ['nope', 'things:0', 'tax_status,nope:1', 'a,b,c,d,e,f', 'tax_status,tax_status,tax_status,tax_status,tax_status,tax_status']) {
      const { status, body } = await get(`facets=${encodeURIComponent(value)}`);
      assert.equal(status, 400, value);
      assert.equal(body.invalid_params[0].name, 'facets', value);
    }
  });

  it('an empty search page carries search_suggestion when another spelling finds something under the same filters', async () => {
    // `shltr` is two edits from `shelter`: too far for the search itself (one edit at 5 to 8 letters), near enough to suggest.
    const { body } = await get('search=shltr');
    assert.equal(body.total_items, 0);
    assert.equal(body.search_suggestion, 'shelter');
    assertHsds('organizationList', body);
    assert.ok((await get(`search=${body.search_suggestion}`)).body.total_items > 0, 'the suggestion finds something');
    // No suggestion when it would find nothing under the same filters, nor on a page that has matches.
    assert.equal((await get('search=shltr&tax_status=501c3')).body.search_suggestion, undefined);
    assert.equal((await get('search=shelter')).body.search_suggestion, undefined);
    assert.equal((await get('search=unheardof')).body.search_suggestion, undefined);
  });

  it('400 naming the parameter for a boolean that is not true, false, 1 or 0', async () => {
    for (const value of ['yes', 'TRUE', '', '2', 'on', 'constructor', 'toString', '__proto__']) {
      const { status, body } = await get(`full=${value}`);
      assert.equal(status, 400, value);
      assert.deepEqual(body.invalid_params, [{ name: 'full', reason: 'must be true, false, 1 or 0' }]);
    }
  });
});

describe('search ranking', () => {
  const organization = (externalId: string, name: string, description?: string): OrganizationRecord => ({
    externalId,
    status: 'published',
    name,
    description,
    identifiers: [],
    tags: [],
  });
  const test = useTestApp(
    fixtureDataset({
      organizations: [
        organization('R1', 'Aardvark Services', 'We run the harbor ferry.'),
        organization('R2', 'Harbor House'),
        organization('R3', 'Bay Help', 'Harbor, harbor and more harbor.'),
        organization('R4', 'Unrelated'),
        organization('R5', 'Harbor Ferry Co'),
        organization('R6', 'Ferry to the Harbor'),
      ],
    }),
  );

  it('lists names holding every word first, by word order then name order, then the other matches in name order, then partial matches', async () => {
    // Every name holding "harbor" has one other word ("co", "to" and "the" are stop words): those starting
    // with it come first, in name order, then the one holding it further on; descriptions only come after.
    const harbor = await getJson(test().app, `${API}/organizations?search=harbor`);
    assert.deepEqual(names(harbor.body), ['Harbor Ferry Co', 'Harbor House', 'Ferry to the Harbor', 'Aardvark Services', 'Bay Help']);
    assert.equal(harbor.body.total_items, 5);
    // The name that is the search exactly comes before the one holding its words in another order.
    // Words split between the name and the description match, after names holding both. Fewer than
    // 20 organizations hold both words: those holding one of them follow, names first.
    const ferry = await getJson(test().app, `${API}/organizations?search=harbor%20ferry`);
    assert.deepEqual(names(ferry.body), ['Harbor Ferry Co', 'Ferry to the Harbor', 'Aardvark Services', 'Harbor House', 'Bay Help']);
    assert.equal(ferry.body.total_items, 5);
    const reversed = await getJson(test().app, `${API}/organizations?search=ferry%20harbor`);
    assert.deepEqual(names(reversed.body), ['Ferry to the Harbor', 'Harbor Ferry Co', 'Aardvark Services', 'Harbor House', 'Bay Help']);
    const pagedAcross = await getJson(test().app, `${API}/organizations?search=harbor%20ferry&per_page=2&page=2`);
    assert.deepEqual(names(pagedAcross.body), ['Aardvark Services', 'Harbor House']);
    const paged = await getJson(test().app, `${API}/organizations?search=harbor&per_page=2&page=2`);
    assert.deepEqual(names(paged.body), ['Ferry to the Harbor', 'Aardvark Services']);
  });
});

describe('a search with more matches than are ranked', () => {
  const many = Array.from({ length: RANKED_SEARCH_LIMIT + 1 }, (_, index): OrganizationRecord => ({
    externalId: `M${index}`,
    status: 'published',
    name: `Org ${String(index).padStart(5, '0')}`,
    description: index % 2 === 0 ? 'harbor' : 'harbor harbor harbor',
    identifiers: [],
    tags: [],
  }));
  const test = useTestApp(fixtureDataset({ organizations: many }));

  it('ranks the first matches and lists the rest after them in index order (here list order: the names are alike)', async () => {
    const first = await getJson(test().app, `${API}/organizations?search=harbor&per_page=100`);
    assert.equal(first.body.total_items, RANKED_SEARCH_LIMIT + 1);
    assert.deepEqual(names(first.body), many.slice(0, 100).map((organization) => organization.name));
    const last = await getJson(test().app, `${API}/organizations?search=harbor&per_page=100&page=${Math.ceil((RANKED_SEARCH_LIMIT + 1) / 100)}`);
    assert.deepEqual(names(last.body), [many.at(-1)!.name]);
  });
});
