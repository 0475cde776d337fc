import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { publishedOrganizations } from '../fixtures/dataset.ts';
import { fixtureDataset } from '../fixtures/dataset.ts';
import { organizationId } from '../../src/hsds/ids.ts';
import { API, getJson, startTestApp, useTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';

/** The validators of a URL's 200, asked for with If-None-Match: * so that the 200 itself is never sent. */
async function validatorsOf(app: TestApp['app'], url: string) {
  const response = await app.inject({ url, headers: { 'if-none-match': '*', 'accept-encoding': 'gzip' } });
  assert.equal(response.statusCode, 304);
  return response.headers;
}

describe('HTTP caching', () => {
  const test = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}) => test().app.inject({ url: `${API}${url}`, headers });

  it('marks successful answers public for 5 minutes, with an ETag and Last-Modified (the publish time)', async () => {
    for (const url of ['/', '/organizations', '/organizations?format=ndjson', '/taxonomy_terms?taxonomy=things', '/openapi.json', '/profile']) {
      const response = await get(url);
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['cache-control'], 'public, max-age=300', url);
      // The profile's URL has two forms (JSON, a page): its ETag names the one sent.
      assert.match(String(response.headers.etag), url === '/profile' ? /^"[0-9a-f]{16}\.[\w-]{10}\.json"$/ : /^"[0-9a-f]{16}\.[\w-]{10}"$/, url);
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

  describe('answers 304 only where the plain answer would be a 200', () => {
    const cached = useTestApp();
    const uncached = useTestApp(undefined, { responseCacheBytes: 0 });
    const conditions = async (app: TestApp['app']) => {
      const plain = await app.inject({ url: `${API}/taxonomies`, headers: { 'accept-encoding': 'gzip' } });
      const { etag, 'last-modified': lastModified } = plain.headers;
      return [{ 'if-none-match': '*' }, { 'if-none-match': String(etag) }, { 'if-modified-since': String(lastModified) }];
    };

    for (const [name, test] of [
      ['with the response cache', cached],
      ['without it', uncached],
    ] as const) {
      it(`${name}: a 404, a 400 and a redirect stay what they are`, async () => {
        const { app } = test();
        for (const condition of await conditions(app)) {
          const headers = { ...condition, 'accept-encoding': 'gzip' };
          const label = JSON.stringify(condition);
          const missing = await app.inject({ url: `${API}/organizations/00000000-0000-5000-8000-000000000000`, headers });
          assert.equal(missing.statusCode, 404, label);
          assert.match(String(missing.headers['content-type']), /^application\/problem\+json/, label);
          assert.equal((await app.inject({ url: `${API}/organizations?per_page=0`, headers })).statusCode, 400, label);
          assert.equal((await app.inject({ url: `${API}/nowhere`, headers })).statusCode, 404, label);
          for (const [method, path] of [['GET', '/organizations/NAT-001'], ['HEAD', '/taxonomies/THINGS'], ['GET', '/taxonomy_terms/colors:red']] as const) {
            const redirect = await app.inject({ method, url: `${API}${path}`, headers });
            assert.equal(redirect.statusCode, 308, `${label} ${method} ${path}`);
            assert.match(String(redirect.headers.location), new RegExp(`${path.split('/')[1]}/[0-9a-f-]{36}$`), `${label} ${path}`);
            assert.equal(redirect.headers.etag, undefined, `${label} ${path}`);
          }
          assert.equal((await app.inject({ url: '/organizations/NAT-001', headers })).statusCode, 308, `${label}: a page's redirect`);
        }
      });

      it(`${name}: a 200 the client holds becomes a 304 without a body, with the 200's validators and Vary`, async () => {
        const { app } = test();
        for (const url of [`${API}/organizations/${organizationId('NAT-001')}`, `${API}/organizations?per_page=3`, `${API}/organizations?format=ndjson`]) {
          for (const method of ['GET', 'HEAD'] as const) {
            const plain = await app.inject({ method, url, headers: { 'accept-encoding': 'br, gzip' } });
            assert.equal(plain.statusCode, 200, url);
            for (const condition of [{ 'if-none-match': String(plain.headers.etag) }, { 'if-none-match': '*' }, { 'if-modified-since': String(plain.headers['last-modified']) }]) {
              const again = await app.inject({ method, url, headers: { ...condition, 'accept-encoding': 'br, gzip' } });
              const label = `${method} ${url} ${JSON.stringify(condition)}`;
              assert.equal(again.statusCode, 304, label);
              assert.equal(again.body, '', label);
              assert.equal(again.headers.etag, plain.headers.etag, label);
              assert.equal(again.headers['last-modified'], plain.headers['last-modified'], label);
              assert.equal(again.headers['cache-control'], 'public, max-age=300', label);
              assert.equal(again.headers.vary, 'Accept-Encoding', label);
              // (Fastify's HEAD routes always add Content-Length: 0.)
              for (const header of ['content-type', 'content-encoding', ...(method === 'GET' ? ['content-length'] : [])]) {
                assert.equal(again.headers[header], undefined, `${label} ${header}`);
              }
            }
          }
        }
      });
    }

    it('keeps the 200 it turned into a 304, so the next revalidation runs no route', async () => {
      const { app } = cached();
      const url = `${API}/taxonomy_terms?per_page=2`;
      const etag = String((await validatorsOf(app, url)).etag);
      const cache = app.responseCache!;
      const hits = cache.hits;
      assert.equal((await app.inject({ url, headers: { 'if-none-match': etag, 'accept-encoding': 'gzip' } })).statusCode, 304);
      assert.equal(cache.hits, hits + 1, 'answered from the response cache');
    });
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

  it('caches 400 and 404 answers briefly, and never a 405 or a 410', async () => {
    for (const url of ['/organizations?per_page=0', '/organizations/00000000-0000-5000-8000-000000000000', '/nowhere']) {
      const { status, headers } = await getJson(test().app, `${API}${url}`);
      assert.ok(status === 400 || status === 404, url);
      assert.equal(headers['cache-control'], 'public, max-age=60', url);
      assert.equal(headers.etag, undefined, url);
    }
    const post = await test().app.inject({ method: 'POST', url: `${API}/organizations` });
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers['cache-control'], 'no-store');
    // A version whose changes are not kept: copy everything again, which a server yet to switch to a
    // version just published elsewhere would say of it too, for a moment.
    const gone = await test().app.inject({ url: `${API}/changes?since=0123456789abcdef` });
    assert.equal(gone.statusCode, 410);
    assert.equal(gone.headers['cache-control'], 'no-store');
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
