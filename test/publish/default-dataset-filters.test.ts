import assert from 'node:assert/strict';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_DATA_DIR } from '../../src/publish/default-dataset.ts';
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
  let exported = 0;

  before(async () => {
    const { input } = await inputFromSources([DEFAULT_DATA_DIR]);
    test = await startTestApp(input);
    await test.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}${API}`;
    for await (const organization of ndjsonLines(`${base}/organizations?format=ndjson`)) {
      exported++;
      if (exported % 97 === 0) assertHsds('organization', organization);
      const taxonomies = new Set<string>();
      for (const tag of organization.classifications) {
        taggedWith.set(tag.taxonomy_term_id, (taggedWith.get(tag.taxonomy_term_id) ?? 0) + 1);
        taxonomies.add(tag.taxonomy_id);
      }
      for (const id of taxonomies) inTaxonomy.set(id, (inTaxonomy.get(id) ?? 0) + 1);
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
