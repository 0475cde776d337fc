import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { publishedOrganizations } from '../fixtures/dataset.ts';
import { fixtureDataset } from '../fixtures/dataset.ts';
import { API, getJson, startTestApp, useTestApp } from '../helpers/app.ts';

describe('HTTP caching', () => {
  const test = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}) => test().app.inject({ url: `${API}${url}`, headers });

  it('marks successful answers public for 5 minutes, with an ETag and Last-Modified (the publish time)', async () => {
    for (const url of ['/', '/organizations', '/organizations?format=ndjson', '/taxonomy_terms?taxonomy=things', '/openapi.json', '/profile']) {
      const response = await get(url);
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['cache-control'], 'public, max-age=300', url);
      assert.match(String(response.headers.etag), /^"[0-9a-f]{16}\.[\w-]{10}"$/, url);
      assert.equal(response.headers['last-modified'], new Date(test().build.publishedAt).toUTCString(), url);
    }
  });

  it('answers If-None-Match with 304, no body, and the same validators', async () => {
    const first = await get('/organizations?per_page=5');
    const etag = String(first.headers.etag);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get('/organizations?per_page=5', { 'if-none-match': header });
      assert.equal(again.statusCode, 304, header);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
      assert.equal(again.headers['cache-control'], 'public, max-age=300');
    }
    assert.equal((await get('/organizations?per_page=5', { 'if-none-match': '"stale"' })).statusCode, 200);
    const head = await test().app.inject({ method: 'HEAD', url: `${API}/organizations`, headers: { 'if-none-match': etag } });
    assert.equal(head.statusCode, 304);
  });

  it('answers If-Modified-Since with 304 when nothing was published since, unless If-None-Match disagrees', async () => {
    const lastModified = String((await get('/taxonomies')).headers['last-modified']);
    assert.equal((await get('/taxonomies', { 'if-modified-since': lastModified })).statusCode, 304);
    assert.equal((await get('/taxonomies', { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode, 200);
    assert.equal((await get('/taxonomies', { 'if-modified-since': 'garbage' })).statusCode, 200);
    assert.equal((await get('/taxonomies', { 'if-modified-since': lastModified, 'if-none-match': '"stale"' })).statusCode, 200);
  });

  it('gives other link origins other ETags (links are absolute URLs)', async () => {
    const one = await get('/organizations', { host: 'one.example' });
    const two = await get('/organizations', { host: 'two.example' });
    assert.notEqual(one.headers.etag, two.headers.etag);
    assert.equal((await get('/organizations', { host: 'two.example', 'if-none-match': String(one.headers.etag) })).statusCode, 200);
  });

  it('changes the ETag when another dataset is published', async () => {
    const other = await startTestApp(fixtureDataset({ organizations: publishedOrganizations.slice(1) }));
    try {
      const before = await get('/organizations');
      const after = await other.app.inject({ url: `${API}/organizations` });
      assert.notEqual(before.headers.etag, after.headers.etag);
      assert.equal((await other.app.inject({ url: `${API}/organizations`, headers: { 'if-none-match': String(before.headers.etag) } })).statusCode, 200);
    } finally {
      await other.close();
    }
  });

  it('caches 400 and 404 answers briefly, and never a 405', async () => {
    for (const url of ['/organizations?per_page=0', '/organizations/00000000-0000-5000-8000-000000000000', '/nowhere']) {
      const { status, headers } = await getJson(test().app, `${API}${url}`);
      assert.ok(status === 400 || status === 404, url);
      assert.equal(headers['cache-control'], 'public, max-age=60', url);
      assert.equal(headers.etag, undefined, url);
    }
    const post = await test().app.inject({ method: 'POST', url: `${API}/organizations` });
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers['cache-control'], 'no-store');
  });

  it('takes max-age from the configuration', async () => {
    const configured = await startTestApp(undefined, { cacheMaxAge: 30 });
    try {
      const response = await configured.app.inject({ url: `${API}/taxonomies` });
      assert.equal(response.headers['cache-control'], 'public, max-age=30');
    } finally {
      await configured.close();
    }
  });
});
