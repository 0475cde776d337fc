import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, getJson, pathOf, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

describe('root, OpenAPI and profile', () => {
  const test = useTestApp();

  it('serves the root object with absolute links that all answer', async () => {
    for (const path of [API, `${API}/`]) {
      const { status, body } = await getJson(test().app, path, { host: 'api.example.org' });
      assert.equal(status, 200);
      assertHsds('root', body);
      assert.equal(body.version, '3.0');
      assert.equal(body.profile, 'http://api.example.org/api/hsds/v3/profile');
      assert.equal(body.openapi_url, 'http://api.example.org/api/hsds/v3/openapi.json');
      assert.deepEqual(Object.keys(body.links), ['self', 'organizations', 'taxonomies', 'taxonomy_terms', 'openapi']);
      for (const link of [body.profile, body.openapi_url, ...Object.values(body.links)] as string[]) {
        assert.equal((await test().app.inject({ url: pathOf(link) })).statusCode, 200, link);
      }
    }
  });

  it('redirects the site root to the API root', async () => {
    const response = await test().app.inject({ url: '/' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, `${API}/`);
  });

  it('describes exactly the served paths in OpenAPI 3.1, errors included', async () => {
    const { body } = await getJson(test().app, `${API}/openapi.json`, { host: 'api.example.org' });
    assert.equal(body.openapi, '3.1.0');
    assert.deepEqual(body.servers, [{ url: 'http://api.example.org/api/hsds/v3' }]);
    assert.deepEqual(Object.keys(body.paths).sort(), [
      '/',
      '/openapi.json',
      '/organizations',
      '/organizations/{id}',
      '/profile',
      '/taxonomies',
      '/taxonomies/{id}',
      '/taxonomy_terms',
      '/taxonomy_terms/{id}',
    ]);
    for (const [path, item] of Object.entries<any>(body.paths)) {
      assert.deepEqual(Object.keys(item), ['get'], path);
      const responses = Object.keys(item.get.responses);
      if (path === '/organizations/{id}') assert.deepEqual(responses, ['200', '308', '404'], path);
      else if (path.endsWith('{id}')) assert.deepEqual(responses, ['200', '404'], path);
      else if (['/organizations', '/taxonomies', '/taxonomy_terms'].includes(path)) assert.deepEqual(responses, ['200', '400'], path);
      else assert.deepEqual(responses, ['200'], path);
      if (responses.includes('308')) assert.equal(item.get.responses['308'].content, undefined, `${path} 308 has no body`);
      for (const code of responses.filter((code) => code >= '400')) {
        assert.ok(item.get.responses[code].content['application/problem+json'], `${path} ${code} is a problem`);
      }
    }
    const parameterNames = (path: string) => body.paths[path].get.parameters.map((parameter: any) => parameter.name);
    assert.deepEqual(parameterNames('/organizations'), ['page', 'per_page', 'format', 'search', 'taxonomy_term_id', 'taxonomy_id', 'modified_after', 'full']);
    assert.deepEqual(parameterNames('/taxonomy_terms'), ['page', 'per_page', 'format', 'search', 'taxonomy_id', 'taxonomy', 'parent_id', 'top_only']);
    assert.deepEqual(parameterNames('/taxonomies'), ['page', 'per_page', 'format', 'search']);
    for (const path of ['/organizations', '/taxonomies', '/taxonomy_terms']) {
      assert.deepEqual(Object.keys(body.paths[path].get.responses['200'].content), ['application/json', 'application/x-ndjson'], path);
    }
    for (const name of ['Organization', 'OrganizationListItem', 'Taxonomy', 'TaxonomyTerm', 'TaxonomyTermDetail', 'Problem']) {
      assert.ok(body.components.schemas[name], name);
    }
  });

  it('serves the profile document, stating what is excluded', async () => {
    const response = await test().app.inject({ url: `${API}/profile` });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/markdown/);
    for (const excluded of ['services', 'locations', 'schedules', 'contacts', 'geocoordinates']) {
      assert.match(response.body, new RegExp(excluded, 'i'));
    }
  });
});
