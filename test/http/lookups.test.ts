import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { organizationId, taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import { canonicalEin } from '../../src/http/references.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, getJson, startTestApp, useTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { defaultDatasetSample } from '../helpers/default-dataset-sample.ts';
import type { DatasetSample } from '../helpers/default-dataset-sample.ts';

/**
 * Issue 17, point 5: what people type in place of a UUID (an EIN as they write it, a taxonomy code,
 * a term as `taxonomy:code`) answers 308 to the canonical URL, GET and HEAD alike, the query kept;
 * what names nothing is a 404 problem. Run on the shipped data (NTEE, Open Eligibility and the real
 * IRS file of Wyoming).
 */

/** Real Wyoming EINs: one with a leading zero (AMERICAN LEGION), one without. */
const LEADING_ZERO = '010631747';
const NO_LEADING_ZERO = '113668969';

const ORIGIN = 'http://localhost';

describe('lookups by native id, code and taxonomy:code (the shipped data)', () => {
  let sample: DatasetSample | undefined;
  let test: TestApp | undefined;
  before(async () => {
    sample = await defaultDatasetSample();
    test = await startTestApp(sample.input);
  });
  after(async () => {
    await test?.close();
    sample?.remove();
  });

  /** Asserts a 308 to `path` (under the API) for GET and HEAD, with the query kept and the cache policy of a success. */
  const assertRedirect = async (requested: string, path: string) => {
    for (const query of ['', '?per_page=1&x=a%20b']) {
      for (const method of ['GET', 'HEAD'] as const) {
        const label = `${method} ${requested}${query}`;
        const response = await test!.app.inject({ method, url: `${API}${requested}${query}` });
        assert.equal(response.statusCode, 308, label);
        assert.equal(response.headers.location, `${ORIGIN}${API}${path}${query}`, label);
        assert.equal(response.headers['cache-control'], 'public, max-age=300', label);
        assert.equal(response.body, '', label);
      }
    }
  };

  const assertNotFound = async (requested: string, detail: string) => {
    const { status, headers, body } = await getJson(test!.app, `${API}${requested}`);
    assert.equal(status, 404, requested);
    assert.match(String(headers['content-type']), /^application\/problem\+json/, requested);
    assert.equal(headers['cache-control'], 'public, max-age=60', requested);
    assert.deepEqual(body, { type: 'about:blank', title: 'Not Found', status: 404, detail }, requested);
    const head = await test!.app.inject({ method: 'HEAD', url: `${API}${requested}` });
    assert.equal(head.statusCode, 404, `HEAD ${requested}`);
    assert.equal(head.headers.location, undefined, `HEAD ${requested}`);
  };

  it('redirects an EIN as given, with a dash, without its leading zero and with extra zeros', async () => {
    const target = `/organizations/${organizationId(LEADING_ZERO)}`;
    for (const typed of [LEADING_ZERO, '01-0631747', '10631747', '0010631747']) await assertRedirect(`/organizations/${typed}`, target);
    const other = `/organizations/${organizationId(NO_LEADING_ZERO)}`;
    for (const typed of [NO_LEADING_ZERO, '11-3668969', '0113668969', '000113668969']) await assertRedirect(`/organizations/${typed}`, other);
    // Where it leads: the organization with that EIN.
    const { status, body } = await getJson(test!.app, `${API}${target}`);
    assert.equal(status, 200);
    assert.equal(body.external_identifier, LEADING_ZERO);
    assert.equal(body.name, 'AMERICAN LEGION');
  });

  it('answers 404 for an EIN of no organization, and for what is not an EIN', async () => {
    for (const typed of ['999999999', '99-9999999', '1-0631747', '010-631747', '01-063174', '01-06317470', '1106317470', '10631747x', '01%200631747', '01--0631747']) {
      await assertNotFound(`/organizations/${typed}`, `No published organization has id or native id "${decodeURIComponent(typed)}".`);
    }
  });

  it('redirects a taxonomy code, in any case', async () => {
    for (const typed of ['ntee', 'NTEE', 'Ntee']) await assertRedirect(`/taxonomies/${typed}`, `/taxonomies/${taxonomyId('ntee')}`);
    for (const typed of ['oe_services', 'OE_SERVICES']) await assertRedirect(`/taxonomies/${typed}`, `/taxonomies/${taxonomyId('oe_services')}`);
    const { status, body } = await getJson(test!.app, `${API}/taxonomies/${taxonomyId('ntee')}`);
    assert.equal(status, 200);
    assert.equal(body.code, 'ntee');
    for (const typed of ['nope', 'ntee:K31', 'ntee ']) {
      await assertNotFound(`/taxonomies/${encodeURIComponent(typed)}`, `No taxonomy has id or code "${typed}".`);
    }
  });

  it('redirects a term as taxonomy:code, the taxonomy code in any case, the colon encoded or not', async () => {
    const k31 = `/taxonomy_terms/${taxonomyTermId('ntee', 'K31')}`;
    for (const typed of ['ntee:K31', 'NTEE:K31', 'Ntee:K31', 'ntee:k31', 'ntee%3AK31', 'NTEE%3ak31']) await assertRedirect(`/taxonomy_terms/${typed}`, k31);
    const primaryCare = `/taxonomy_terms/${taxonomyTermId('oe_services', '1206-2')}`;
    for (const typed of ['oe_services:1206-2', 'OE_SERVICES:1206-2', 'oe_services%3A1206-2']) await assertRedirect(`/taxonomy_terms/${typed}`, primaryCare);
    const { status, body } = await getJson(test!.app, `${API}${primaryCare}`);
    assert.equal(status, 200);
    assert.deepEqual([body.code, body.name, body.taxonomy], ['1206-2', 'Primary Care', 'oe_services']);
    for (const typed of ['ntee:K3', 'ntee:ZZZ', 'nope:K31', 'ntee', 'K31', 'ntee:', ':K31', 'oe_services:1206-9']) {
      await assertNotFound(`/taxonomy_terms/${encodeURIComponent(typed)}`, `No taxonomy term has id or taxonomy:code "${typed}".`);
    }
  });

  it('keeps a UUID of nothing a plain 404', async () => {
    await assertNotFound('/taxonomies/00000000-0000-5000-8000-000000000000', 'No taxonomy has id "00000000-0000-5000-8000-000000000000".');
  });

  it('documents the 308 of each lookup in the OpenAPI document', async () => {
    const { body } = await getJson(test!.app, `${API}/openapi.json`);
    for (const [path, accepted] of [
      ['/organizations/{id}', '90-0897473'],
      ['/taxonomies/{id}', '`ntee`'],
      ['/taxonomy_terms/{id}', '`ntee:K31`'],
    ] as const) {
      const operation = body.paths[path].get;
      assert.deepEqual(Object.keys(operation.responses), ['200', '308', '404'], path);
      assert.ok(operation.responses['308'].headers.location, path);
      const [parameter] = operation.parameters;
      assert.ok(parameter.description.includes(accepted), `${path}: ${parameter.description}`);
      assert.ok(parameter.description.includes('`308`'), path);
    }
  });
});

describe('the native id as given comes before its EIN form', () => {
  // A publisher's own native ids that look like EINs: one is another's canonical form.
  const organizations = [
    { ...publishedOrganizations[0]!, externalId: '10211530', name: 'Exact Native Id' },
    { ...publishedOrganizations[1]!, externalId: '010211530', name: 'Canonical Ein', additionalWebsites: undefined },
    { ...publishedOrganizations[2]!, externalId: '90-0897473', name: 'Dashed Native Id' },
  ];
  const test = useTestApp(fixtureDataset({ organizations }));
  const location = async (typed: string) => (await test().app.inject({ url: `${API}/organizations/${typed}` })).headers.location;

  it('answers the exact native id, and the EIN form only when no organization has the value as given', async () => {
    assert.equal(await location('10211530'), `${ORIGIN}${API}/organizations/${organizationId('10211530')}`);
    assert.equal(await location('010211530'), `${ORIGIN}${API}/organizations/${organizationId('010211530')}`);
    assert.equal(await location('01-0211530'), `${ORIGIN}${API}/organizations/${organizationId('010211530')}`);
    assert.equal(await location('0010211530'), `${ORIGIN}${API}/organizations/${organizationId('010211530')}`);
    // A native id with a dash is found as given; its digits are not it (only the 9-digit form is tried).
    assert.equal(await location('90-0897473'), `${ORIGIN}${API}/organizations/${organizationId('90-0897473')}`);
    assert.equal((await test().app.inject({ url: `${API}/organizations/900897473` })).statusCode, 404);
  });
});

describe('canonicalEin', () => {
  it('reads the forms people write, and nothing else', () => {
    for (const [typed, canonical] of [
      ['900897473', '900897473'],
      ['90-0897473', '900897473'],
      ['010211530', '010211530'],
      ['10211530', '010211530'],
      ['01-0211530', '010211530'],
      ['0900897473', '900897473'],
      ['000000000010211530', '010211530'],
      ['1', '000000001'],
    ] as const) {
      assert.equal(canonicalEin(typed), canonical, typed);
    }
    for (const typed of ['', '-', '1234567890', '90-089747', '90-08974733', '900-897473', '9-00897473', '90 0897473', '９００８９７４７３', '90–0897473', 'ein900897473']) {
      assert.equal(canonicalEin(typed), undefined, typed);
    }
  });
});
