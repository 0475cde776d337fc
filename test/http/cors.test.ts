import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, useTestApp } from '../helpers/app.ts';

describe('CORS', () => {
  const test = useTestApp();
  const request = (method: 'GET' | 'HEAD' | 'OPTIONS' | 'POST', url: string, headers: Record<string, string>) =>
    test().app.inject({ method, url: `${API}${url}`, headers });

  it('lets any origin read every answer, without credentials, and exposes the validators', async () => {
    for (const url of ['/organizations', '/organizations/nope', '/taxonomies?per_page=0']) {
      const response = await request('GET', url, { origin: 'https://app.example' });
      assert.equal(response.headers['access-control-allow-origin'], '*', url);
      assert.equal(response.headers['access-control-allow-credentials'], undefined, url);
      assert.match(String(response.headers['access-control-expose-headers']), /ETag/, url);
    }
  });

  it('answers a preflight with the read methods, cacheable by the browser', async () => {
    const response = await request('OPTIONS', '/organizations', {
      origin: 'https://app.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'if-none-match',
    });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.equal(response.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
    assert.equal(response.headers['access-control-allow-headers'], 'if-none-match');
    assert.equal(response.headers['access-control-max-age'], '86400');
    assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS');
  });

  it('answers HEAD like GET on every GET route', async () => {
    for (const url of ['/', '/organizations', '/taxonomies', '/taxonomy_terms', '/openapi.json', '/profile']) {
      const get = await request('GET', url, {});
      const head = await request('HEAD', url, {});
      assert.equal(head.statusCode, 200, url);
      assert.equal(head.body, '', url);
      assert.equal(head.headers.etag, get.headers.etag, url);
      assert.equal(head.headers['content-type'], get.headers['content-type'], url);
    }
  });
});
