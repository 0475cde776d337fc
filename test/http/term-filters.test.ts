import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import { API, getJson, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

/** Fixture terms: things A..W, where F, K, P and U are children of A; Colors has 7 terms without parents. */
describe('taxonomy term filters', () => {
  const test = useTestApp();
  const get = (query: string) => getJson(test().app, `${API}/taxonomy_terms?per_page=100&${query}`);
  const codes = (body: any): string[] => body.contents.map((term: any) => term.code);

  it('gives each term its children_count, in lists and in the single-term document', async () => {
    const { body } = await get('taxonomy=things');
    assertHsds('taxonomyTermList', body);
    const counts = Object.fromEntries(body.contents.map((term: any) => [term.code, term.children_count]));
    assert.equal(counts.A, 4);
    assert.equal(counts.F, 0);
    assert.equal(Object.values(counts).reduce((sum: number, count) => sum + (count as number), 0), 4);
    const single = await getJson(test().app, `${API}/taxonomy_terms/${taxonomyTermId('things', 'A')}`);
    assert.equal(single.body.children_count, 4);
  });

  it('parent_id lists the children of a term, given by id or by taxonomy:code', async () => {
    for (const value of [taxonomyTermId('things', 'A'), 'things:A', 'THINGS:a']) {
      const { status, body } = await get(`parent_id=${value}`);
      assert.equal(status, 200, value);
      assert.deepEqual(codes(body), ['F', 'K', 'P', 'U'], value);
      for (const term of body.contents) assert.equal(term.parent_id, taxonomyTermId('things', 'A'));
    }
    assert.equal((await get('parent_id=things:B')).body.total_items, 0, 'a leaf has no children');
    const unknown = await get('parent_id=things:nope');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.invalid_params[0].name, 'parent_id');
  });

  it('top_only=true lists the terms without a parent; false or 0 lists all', async () => {
    for (const value of ['true', '1']) {
      const { body } = await get(`top_only=${value}`);
      assert.equal(body.total_items, 30 - 4, value);
      assert.ok(body.contents.every((term: any) => term.parent_id === undefined));
    }
    for (const value of ['false', '0']) assert.equal((await get(`top_only=${value}`)).body.total_items, 30);
    assert.equal((await get('top_only=yes')).status, 400);
  });

  it('taxonomy_id is the same filter as taxonomy, and all filters combine with AND', async () => {
    assert.deepEqual(codes((await get(`taxonomy_id=${taxonomyId('Colors')}`)).body), codes((await get('taxonomy=colors')).body));
    assert.equal((await get('taxonomy_id=colors')).body.total_items, 7);
    assert.equal((await get('taxonomy_id=colors&taxonomy=Colors')).status, 200);
    assert.equal((await get('taxonomy_id=colors&taxonomy=things')).status, 400);
    assert.deepEqual(codes((await get('taxonomy_id=things&top_only=1')).body).slice(0, 6), ['A', 'B', 'C', 'D', 'E', 'G']);
    assert.equal((await get('taxonomy_id=colors&parent_id=things:A')).body.total_items, 0);
    assert.equal((await get('parent_id=things:A&top_only=true')).body.total_items, 0);
  });

  it('search finds terms by code, name or description, ranked, combined with other filters', async () => {
    assert.deepEqual(codes((await get('search=magenta')).body), ['magenta']);
    assert.deepEqual(codes((await get('search=first')).body), ['A'], 'description');
    assert.deepEqual(codes((await get('search=thing%20k')).body), ['K']);
    const colors = await get('search=color');
    assert.equal(colors.body.total_items, 7);
    assert.equal((await get('search=color&taxonomy=things')).body.total_items, 0);
    assert.equal((await get('search=%22%29%28*')).body.total_items, 30, 'no words: no search');
  });

  it('taxonomies can be searched by code, name and description', async () => {
    const search = async (text: string) => (await getJson(test().app, `${API}/taxonomies?search=${text}`)).body.contents.map((taxonomy: any) => taxonomy.code);
    assert.deepEqual(await search('demo'), ['things']);
    assert.deepEqual(await search('COLORS'), ['Colors']);
    assert.deepEqual(await search('nothing'), []);
  });
});
