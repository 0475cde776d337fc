import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import { terms } from '../fixtures/dataset.ts';
import { API, getJson, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

describe('taxonomies and terms', () => {
  const test = useTestApp();

  it('lists taxonomies by code, as valid HSDS', async () => {
    const { status, body } = await getJson(test().app, `${API}/taxonomies`);
    assert.equal(status, 200);
    assertHsds('taxonomyList', body);
    assert.deepEqual(body.contents.map((taxonomy: any) => taxonomy.code), ['Colors', 'things']);
    const things = body.contents[1];
    assert.deepEqual(things, {
      id: taxonomyId('things'),
      name: 'Things',
      description: 'A demo taxonomy',
      uri: 'https://example.org/things',
      version: '1',
      code: 'things',
    });
  });

  it('serves one taxonomy by id', async () => {
    const { status, body } = await getJson(test().app, `${API}/taxonomies/${taxonomyId('Colors')}`);
    assert.equal(status, 200);
    assertHsds('taxonomy', body);
    assert.equal(body.code, 'Colors');
    assert.equal((await getJson(test().app, `${API}/taxonomies/${taxonomyTermId('Colors', 'red')}`)).status, 404);
  });

  it('lists every term, taxonomy by taxonomy, in source order', async () => {
    const { body } = await getJson(test().app, `${API}/taxonomy_terms?per_page=100`);
    assertHsds('taxonomyTermList', body);
    const expected = [...terms.filter((term) => term.taxonomy === 'Colors'), ...terms.filter((term) => term.taxonomy === 'things')];
    assert.deepEqual(body.contents.map((term: any) => `${term.taxonomy}:${term.code}`), expected.map((term) => `${term.taxonomy}:${term.code}`));
  });

  it('filters terms by taxonomy code in any case, or by id', async () => {
    for (const value of ['Colors', 'colors', 'COLORS', taxonomyId('Colors'), taxonomyId('Colors').toUpperCase()]) {
      const { status, body } = await getJson(test().app, `${API}/taxonomy_terms?taxonomy=${value}`);
      assert.equal(status, 200, value);
      assert.equal(body.total_items, 7, value);
      assert.ok(body.contents.every((term: any) => term.taxonomy_id === taxonomyId('Colors')));
    }
  });

  it('renders terms with parent ids and term URIs where known', async () => {
    const { body } = await getJson(test().app, `${API}/taxonomy_terms?taxonomy=things&per_page=10`);
    const f = body.contents.find((term: any) => term.code === 'F');
    assert.equal(f.parent_id, taxonomyTermId('things', 'A'));
    assert.equal(f.description, '');
    assert.equal(body.contents[0].parent_id, undefined);
    const red = (await getJson(test().app, `${API}/taxonomy_terms?taxonomy=colors`)).body.contents[0];
    assert.equal(red.term_uri, 'https://example.org/colors/red');
  });

  it('serves one term with its taxonomy_detail', async () => {
    const { status, body } = await getJson(test().app, `${API}/taxonomy_terms/${taxonomyTermId('things', 'F')}`);
    assert.equal(status, 200);
    assertHsds('taxonomyTerm', body);
    assert.equal(body.code, 'F');
    assert.equal(body.taxonomy, 'things');
    assert.equal(body.taxonomy_detail.id, taxonomyId('things'));
    assertHsds('taxonomy', body.taxonomy_detail);
  });
});
