import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, getJson, pathOf, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

const HOST = { host: 'api.example.org' };
const ORIGIN = 'http://api.example.org/api/hsds/v3';

describe('root object', () => {
  const test = useTestApp();

  it('names HSDS 3.2.3, the profile and the OpenAPI document, with absolute links that all answer', async () => {
    for (const path of [API, `${API}/`]) {
      const { status, body } = await getJson(test().app, path, HOST);
      assert.equal(status, 200);
      assertHsds('root', body);
      assert.equal(body.version, '3.2.3');
      assert.equal(body.profile, `${ORIGIN}/profile`);
      assert.equal(body.openapi_url, `${ORIGIN}/openapi.json`);
      // Never invented: absent unless the operator sets them.
      for (const field of ['description', 'data_guide', 'publisher']) assert.equal(body[field], undefined, field);
      assert.deepEqual(Object.keys(body.links), ['self', 'organizations', 'taxonomies', 'taxonomy_terms', 'changes', 'datapackage', 'openapi', 'profile', 'docs', 'home']);
      for (const link of [body.profile, body.openapi_url, ...Object.values(body.links)] as string[]) {
        assert.equal((await test().app.inject({ url: pathOf(link) })).statusCode, 200, link);
      }
    }
  });
});

describe('root object with what the operator says about the feed', () => {
  const rootDetails = {
    description: 'Nonprofits of Wyoming, from the IRS.',
    data_guide: 'https://example.org/guide',
    publisher: { name: 'Example 211', identifier: 'US-EIN-990000002', email: 'data@example.org', website: 'https://example.org', additional_websites: ['https://example.org/feedback'] },
  };
  const test = useTestApp(undefined, { rootDetails });

  it('carries description, data_guide and publisher as set, after the HSDS fields', async () => {
    const { body } = await getJson(test().app, API, HOST);
    assertHsds('root', body);
    assert.deepEqual(Object.keys(body).slice(0, 6), ['version', 'profile', 'openapi_url', 'description', 'data_guide', 'publisher']);
    assert.deepEqual({ description: body.description, data_guide: body.data_guide, publisher: body.publisher }, rootDetails);
  });
});

describe('services', () => {
  const test = useTestApp();

  // HSDS requires /services and /services/{id} of every API; this profile has none to list.
  it('answers /services and /service_at_locations with an empty HSDS page, and no item by any id', async () => {
    for (const path of ['/services', '/service_at_locations']) {
      const { status, body } = await getJson(test().app, `${API}${path}?per_page=5`, HOST);
      assert.equal(status, 200, path);
      assert.deepEqual(
        { ...body, links: undefined },
        { total_items: 0, total_pages: 1, page_number: 1, size: 0, first_page: true, last_page: true, empty: true, contents: [], links: undefined },
      );
      assert.equal(body.links.self, `${ORIGIN}${path}?per_page=5&page=1`);
      assert.equal((await test().app.inject({ url: `${API}${path}?format=ndjson` })).body, '');
      assert.equal((await test().app.inject({ url: `${API}${path}?page=0` })).statusCode, 400);
      const missing = await getJson(test().app, `${API}${path}/5c4d79d7-cc55-470e-9f1f-8cad074e4892`);
      assert.equal(missing.status, 404);
      assert.match(missing.body.detail, /organizations and taxonomies only/);
    }
  });
});
