import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, useTestApp } from '../helpers/app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('headers on every response', () => {
  const test = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') => test().app.inject({ method, url, headers });

  it('carries nosniff and a request id on success, cache hits, 304s, errors and the docs page', async () => {
    const first = await get(`${API}/organizations?per_page=2`);
    const again = await get(`${API}/organizations?per_page=2`);
    const notModified = await get(`${API}/organizations?per_page=2`, { 'if-none-match': String(first.headers.etag) });
    const responses = [
      first,
      again,
      notModified,
      await get(`${API}/organizations/nope`),
      await get(`${API}/organizations?page=0`),
      await get(`${API}/organizations`, {}, 'POST'),
      await get(`${API}/organizations/%E0%A4%A`),
      await get(`${API}/docs`),
      await get('/healthz'),
    ];
    assert.deepEqual(
      responses.map((response) => response.statusCode),
      [200, 200, 304, 404, 400, 405, 404, 200, 200],
    );
    const ids = new Set<string>();
    for (const response of responses) {
      assert.equal(response.headers['x-content-type-options'], 'nosniff', String(response.statusCode));
      assert.match(String(response.headers['x-request-id']), UUID, String(response.statusCode));
      ids.add(String(response.headers['x-request-id']));
    }
    assert.equal(ids.size, responses.length, 'one id per request, even for a response sent from the cache');
  });

  it('sends a page with these headers and no others (nothing that names the software, such as X-Powered-By or Server), fresh or from the cache', async () => {
    const page = ['access-control-allow-origin', 'access-control-expose-headers', 'cache-control', 'connection', 'content-length', 'content-type', 'date', 'etag', 'last-modified', 'link', 'vary', 'x-content-type-options', 'x-request-id'];
    for (const headers of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
      const expected = 'accept-encoding' in headers ? [...page, 'content-encoding'].sort() : page;
      for (const round of ['fresh', 'cached']) {
        const response = await get(`${API}/organizations?per_page=3`, headers);
        assert.deepEqual(Object.keys(response.headers).sort(), expected, `${round}, ${JSON.stringify(headers)}`);
      }
    }
  });

  it('tells browsers to send no Referer from an HTML page (pages link to organizations\' sites), fresh, cached or answered before Fastify, and says nothing of it on JSON', async () => {
    const pages = ['/', '/organizations?search=shelter', '/organizations/nope', `${API}/profile?format=html`, `${API}/docs/`];
    for (const url of pages) {
      for (const round of ['fresh', 'cached']) {
        const response = await get(url);
        assert.match(String(response.headers['content-type']), /^text\/html/, url);
        assert.equal(response.headers['referrer-policy'], 'no-referrer', `${round} ${url}`);
      }
    }
    assert.equal((await get(`${API}/organizations?per_page=1`)).headers['referrer-policy'], undefined);
    await test().app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = test().app.server.address() as { port: number };
    // The first keeps the page for this origin; the second is answered from it before Fastify.
    for (const round of ['fresh', 'a hit answered before Fastify']) {
      const response = await fetch(`http://127.0.0.1:${port}/organizations?search=shelter`);
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer', round);
      await response.arrayBuffer();
    }
  });

  it("keeps the caller's X-Request-Id when it is short and plain, and replaces any other", async () => {
    assert.equal((await get(`${API}/`, { 'x-request-id': 'edge-7f3a.42:b@x' })).headers['x-request-id'], 'edge-7f3a.42:b@x');
    for (const given of ['has space', 'x'.repeat(129), 'quote"d', '']) {
      assert.match(String((await get(`${API}/`, { 'x-request-id': given })).headers['x-request-id']), UUID, given);
    }
  });

  it('lets browsers read the request id', async () => {
    const response = await get(`${API}/`, { origin: 'https://example.org' });
    assert.match(String(response.headers['access-control-expose-headers']), /X-Request-Id/);
  });
});
