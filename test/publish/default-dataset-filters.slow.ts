import assert from 'node:assert/strict';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';
import { API, getJson, startTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';
import { inputFromSources } from '../helpers/sources.ts';

/** Each line of an NDJSON response, parsed, read as it arrives (the whole list is large). */
async function* ndjsonLines(url: string): AsyncGenerator<any> {
  const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => get(url, resolve).on('error', reject));
  assert.equal(response.statusCode, 200);
  for await (const line of createInterface({ input: response, crlfDelay: Infinity })) yield JSON.parse(line);
}

/**
 * The whole shipped dataset (326k organizations): the filter totals the API reports must equal what
 * the organizations themselves say, counted independently from the full NDJSON export.
 */
describe('filters on the whole default dataset', () => {
  let test: TestApp;
  let base: string;
  const taggedWith = new Map<string, number>();
  const inTaxonomy = new Map<string, number>();
  /** Organizations tagged with a term or any term below it, by term id, counted from the terms' parent_id. */
  const inSubtree = new Map<string, number>();
  let exported = 0;

  before(async () => {
    const { input } = await inputFromSources([DEFAULT_DATA_DIR]);
    test = await startTestApp(input);
    await test.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}${API}`;
    const parentOf = new Map<string, string>();
    for await (const term of ndjsonLines(`${base}/taxonomy_terms?format=ndjson`)) if (term.parent_id !== undefined) parentOf.set(term.id, term.parent_id);
    for await (const organization of ndjsonLines(`${base}/organizations?format=ndjson`)) {
      exported++;
      if (exported % 97 === 0) assertHsds('organization', organization);
      const taxonomies = new Set<string>();
      const subtrees = new Set<string>();
      for (const tag of organization.classifications) {
        taggedWith.set(tag.taxonomy_term_id, (taggedWith.get(tag.taxonomy_term_id) ?? 0) + 1);
        taxonomies.add(tag.taxonomy_id);
        for (let id: string | undefined = tag.taxonomy_term_id; id !== undefined; id = parentOf.get(id)) subtrees.add(id);
      }
      for (const id of taxonomies) inTaxonomy.set(id, (inTaxonomy.get(id) ?? 0) + 1);
      for (const id of subtrees) inSubtree.set(id, (inSubtree.get(id) ?? 0) + 1);
    }
  });
  after(() => test.close());

  it('exports every published organization once as NDJSON', async () => {
    assert.equal(exported, test.build.organizations);
    assert.ok(exported > 300_000);
  });

  it('taxonomy_term_id=X totals equal the number of organizations tagged X, for every term', async () => {
    let terms = 0;
    let nonEmpty = 0;
    for await (const term of ndjsonLines(`${base}/taxonomy_terms?format=ndjson`)) {
      terms++;
      const expected = taggedWith.get(term.id) ?? 0;
      if (expected > 0) nonEmpty++;
      const { body } = await getJson(test.app, `${API}/organizations?taxonomy_term_id=${term.id}&per_page=1`);
      assert.equal(body.total_items, expected, `${term.taxonomy}:${term.code}`);
      if (expected > 0 && terms % 25 === 0) {
        const byCode = await getJson(test.app, `${API}/organizations?taxonomy_term_id=${encodeURIComponent(`${term.taxonomy}:${term.code}`)}&per_page=1&page=${expected}`);
        assert.equal(byCode.body.total_items, expected);
        assert.equal(byCode.body.size, 1, 'the last page holds the last tagged organization');
        assert.ok(byCode.body.contents[0].classifications.some((tag: any) => tag.taxonomy_term_id === term.id));
      }
    }
    assert.equal(terms, 681 + 291 + 94);
    assert.ok(nonEmpty > 500, `${nonEmpty} terms have organizations`);
  });

  it('taxonomy_term_id=X&include_descendants=true totals equal the organizations tagged X or a term below it, for every term', async () => {
    let checked = 0;
    for await (const term of ndjsonLines(`${base}/taxonomy_terms?format=ndjson`)) {
      const expected = inSubtree.get(term.id) ?? 0;
      const { body } = await getJson(test.app, `${API}/organizations?taxonomy_term_id=${term.id}&include_descendants=true&per_page=1&page=${Math.max(expected, 1)}`);
      assert.equal(body.total_items, expected, `${term.taxonomy}:${term.code}`);
      if (expected > 0) assert.equal(body.size, 1, 'the last page holds the last organization of the subtree');
      checked++;
    }
    assert.equal(checked, 681 + 291 + 94);
    // Human Services: no organization is tagged with the major group itself, thousands with the codes below it.
    const humanServices = await getJson(test.app, `${API}/organizations?taxonomy_term_id=ntee:P&include_descendants=1&per_page=1`);
    assert.ok(humanServices.body.total_items > 5_000, `${humanServices.body.total_items}`);
    const exactly = (await getJson(test.app, `${API}/organizations?taxonomy_term_id=ntee:P&per_page=1`)).body.total_items;
    assert.ok(exactly < humanServices.body.total_items / 10, `${exactly} tagged with P itself`);
  });

  it('taxonomy_id=X totals equal the number of organizations with any term of X', async () => {
    for await (const taxonomy of ndjsonLines(`${base}/taxonomies?format=ndjson`)) {
      const { body } = await getJson(test.app, `${API}/organizations?taxonomy_id=${taxonomy.code}&per_page=1`);
      assert.equal(body.total_items, inTaxonomy.get(taxonomy.id) ?? 0, taxonomy.code);
    }
  });

  it('search finds organizations by words of their names', async () => {
    const { body } = await getJson(test.app, `${API}/organizations?search=food%20bank&per_page=100`);
    assert.ok(body.total_items > 100, `${body.total_items} food banks`);
    for (const item of body.contents) assert.match(`${item.name} ${item.alternate_name ?? ''}`, /food/i);
    assertHsds('organizationList', body);
  });
});
