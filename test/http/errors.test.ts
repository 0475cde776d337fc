import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, useTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';

async function problem(test: TestApp, url: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' = 'GET') {
  const response = await test.app.inject({ method, url });
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, `${method} ${url}`);
  const body = JSON.parse(response.body);
  assert.equal(body.status, response.statusCode);
  for (const field of ['type', 'title', 'detail']) assert.equal(typeof body[field], 'string', `${field} of ${url}`);
  assert.doesNotMatch(response.body, /\bat .*\.ts:\d+|node_modules|SELECT |sqlite|\/work\//i, 'no internals leak');
  return { status: response.statusCode, headers: response.headers, body };
}

describe('errors are RFC 9457 problems', () => {
  const test = useTestApp();

  const badPaging: [string, string][] = [
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=', 'page'],
    ['page=99999999999999999999', 'page'],
    ['page=1e1', 'page'],
    ['page=%2B5', 'page'],
    ['page=0x10', 'page'],
    ['page=%205', 'page'],
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['per_page=ten', 'per_page'],
  ];
  for (const [query, parameter] of badPaging) {
    for (const list of ['organizations', 'taxonomies', 'taxonomy_terms']) {
      it(`400 for ${query} on /${list}, naming ${parameter} and the allowed range`, async () => {
        const { status, body } = await problem(test(), `${API}/${list}?${query}`);
        assert.equal(status, 400);
        assert.deepEqual(body.invalid_params.map((param: any) => param.name), [parameter]);
        assert.match(body.invalid_params[0].reason, parameter === 'per_page' ? /from 1 to 100/ : /from 1 to/);
        assert.match(body.detail, new RegExp(`^${parameter} must be an integer from 1 to`));
      });
    }
  }

  it('400 for an unknown taxonomy, naming the accepted codes', async () => {
    const { status, body } = await problem(test(), `${API}/taxonomy_terms?taxonomy=nope`);
    assert.equal(status, 400);
    assert.deepEqual(body.invalid_params.map((param: any) => param.name), ['taxonomy']);
    assert.match(body.detail, /Colors, things/);
  });

  for (const id of ['not-a-uuid', '00000000-0000-0000-0000-000000000000', '7c6a6224-6603-54b4-91ca-f6c5ebed8c62x', '%E2%9C%93']) {
    it(`404 for organization id ${id}`, async () => {
      assert.equal((await problem(test(), `${API}/organizations/${id}`)).status, 404);
    });
  }

  for (const [label, path] of [
    ['a path that does not percent-decode', `${API}/organizations/%E0%A4%A`],
    ['an id longer than any id', `${API}/organizations/${'a'.repeat(1000)}`],
  ]) {
    it(`404 problem for ${label}, without echoing it`, async () => {
      const { status, body } = await problem(test(), path!);
      assert.equal(status, 404);
      assert.equal(body.type, 'about:blank');
      assert.ok(!JSON.stringify(body).includes('aaaa'));
    });
  }

  for (const path of ['/api/hsds/v3/locations', '/api/hsds/v3/organizations/a/b', '/api/hsds/v2/organizations', '/favicon.ico']) {
    it(`404 for unknown path ${path}`, async () => {
      assert.equal((await problem(test(), path)).status, 404);
    });
  }

  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    for (const path of [`${API}/organizations`, `${API}/nowhere`]) {
      it(`405 with Allow for ${method} ${path}`, async () => {
        const { status, headers } = await problem(test(), path, method);
        assert.equal(status, 405);
        assert.equal(headers.allow, 'GET, HEAD, OPTIONS');
      });
    }
  }

  it('405 before reading any body, even a malformed or huge one', async () => {
    for (const payload of ['{bad', 'x'.repeat(2 * 1024 * 1024)]) {
      const response = await test().app.inject({ method: 'POST', url: `${API}/organizations`, payload, headers: { 'content-type': 'application/json' } });
      assert.equal(response.statusCode, 405);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    }
  });

  it('400 naming the parameter when a filter is given twice', async () => {
    const { status, body } = await problem(test(), `${API}/taxonomy_terms?taxonomy=things&taxonomy=Colors`);
    assert.equal(status, 400);
    assert.deepEqual(body.invalid_params, [{ name: 'taxonomy', reason: 'must be given once' }]);
  });

  it('ignores unknown query parameters', async () => {
    const response = await test().app.inject({ url: `${API}/organizations?foo=bar&full_service=true&per_page=3` });
    assert.equal(response.statusCode, 200);
    assert.equal(JSON.parse(response.body).size, 3);
  });

  it('answers HEAD like GET, without a body', async () => {
    const get = await test().app.inject({ method: 'GET', url: `${API}/organizations` });
    const head = await test().app.inject({ method: 'HEAD', url: `${API}/organizations` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-type'], get.headers['content-type']);
  });

  it('answers OPTIONS with the allowed methods, ignoring any body', async () => {
    const response = await test().app.inject({ method: 'OPTIONS', url: `${API}/organizations`, payload: '{bad', headers: { 'content-type': 'application/json' } });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS');
  });
});
