import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { publishedOrganizations, terms } from '../fixtures/dataset.ts';
import { API, getJson, pathOf, startTestApp, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

/** The envelope fields must agree with each other and with the request. */
function assertEnvelope(body: any, expected: { page: number; perPage: number; total: number }): void {
  const totalPages = Math.max(1, Math.ceil(expected.total / expected.perPage));
  const first = (expected.page - 1) * expected.perPage;
  const size = Math.max(0, Math.min(expected.perPage, expected.total - first));
  assert.equal(body.total_items, expected.total);
  assert.equal(body.total_pages, totalPages);
  assert.equal(body.page_number, expected.page);
  assert.equal(body.size, size);
  assert.equal(body.contents.length, size);
  assert.equal(body.first_page, expected.page === 1);
  assert.equal(body.last_page, expected.page >= totalPages);
  assert.equal(body.empty, size === 0);
  assert.equal(new URL(body.links.self).searchParams.get('page'), String(expected.page));
  assert.equal(new URL(body.links.first).searchParams.get('page'), '1');
  assert.equal(new URL(body.links.last).searchParams.get('page'), String(totalPages));
  assert.equal(body.links.prev === undefined, expected.page === 1);
  assert.equal(body.links.next === undefined, expected.page >= totalPages);
}

describe('pagination', () => {
  const test = useTestApp();

  const total = publishedOrganizations.length; // 23: 5 pages of 5, the last one holding 3
  for (const [label, page] of [['first', 1], ['middle', 3], ['last', 5], ['past the end', 9]] as const) {
    it(`keeps the envelope consistent on the ${label} page`, async () => {
      const { status, body } = await getJson(test().app, `${API}/organizations?per_page=5&page=${page}`);
      assert.equal(status, 200);
      assertHsds('organizationList', body);
      assertEnvelope(body, { page, perPage: 5, total });
    });
  }

  it('walks a filtered term list by its next links, seeing each term exactly once', async () => {
    const expected = terms.filter((term) => term.taxonomy === 'things').map((term) => term.code);
    const seen: string[] = [];
    let link: string | undefined = `${API}/taxonomy_terms?taxonomy=things&per_page=4&unrelated=kept`;
    let pages = 0;
    while (link !== undefined) {
      const { body } = await getJson(test().app, link);
      assertHsds('taxonomyTermList', body);
      assertEnvelope(body, { page: ++pages, perPage: 4, total: expected.length });
      seen.push(...body.contents.map((term: any) => term.code));
      if (body.links.next !== undefined) {
        const next = new URL(body.links.next);
        assert.equal(next.searchParams.get('taxonomy'), 'things');
        assert.equal(next.searchParams.get('unrelated'), 'kept');
        assert.equal(next.searchParams.get('per_page'), '4');
      }
      link = body.links.next === undefined ? undefined : pathOf(body.links.next);
    }
    assert.equal(pages, 6);
    assert.deepEqual(seen, expected);
  });

  it('links back to the last page from past the end', async () => {
    const { body } = await getJson(test().app, `${API}/organizations?per_page=10&page=7`);
    assert.equal(new URL(body.links.prev).searchParams.get('page'), '3');
  });

  it('answers an empty list with one empty page', async () => {
    const empty = await startTestApp({ taxonomies: [], terms: [], organizations: [] });
    try {
      const { body } = await getJson(empty.app, `${API}/organizations`);
      assertHsds('organizationList', body);
      assertEnvelope(body, { page: 1, perPage: 20, total: 0 });
    } finally {
      await empty.close();
    }
  });
});
