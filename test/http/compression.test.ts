import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { API, startTestApp, useTestApp } from '../helpers/app.ts';

const decode = (coding: unknown, body: Buffer): string =>
  (coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body).toString('utf8');

describe('compression', () => {
  const test = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
    test().app.inject({ method, url: `${API}${url}`, headers });

  it('sends brotli or gzip as Accept-Encoding allows, the same document in each, and says it varies', async () => {
    // [Accept-Encoding, coding of a kept response, coding of a streamed list]: where both are
    // accepted, brotli for what the response cache keeps, gzip for what is made on every request.
    const cases: [string | undefined, string | undefined, string | undefined][] = [
      [undefined, undefined, undefined],
      ['gzip, deflate, br', 'br', 'gzip'],
      ['gzip', 'gzip', 'gzip'],
      ['br', 'br', 'br'],
      ['br;q=0, gzip', 'gzip', 'gzip'],
      ['gzip;q=0.5, br;q=0.9', 'br', 'br'],
      ['deflate', undefined, undefined],
      ['identity', undefined, undefined],
      ['*', 'br', 'gzip'],
    ];
    const isStreamed = (url: string) => /format=(ndjson|csv)|changes\?since/.test(url);
    for (const url of ['/organizations?per_page=3', '/organizations?format=ndjson', '/taxonomies?format=csv', '/changes?since=0', '/changes', '/taxonomy_terms?per_page=100', '/openapi.json', '/']) {
      const plain = (await get(url)).body;
      for (const [accept, kept, streamed] of cases) {
        const expected = isStreamed(url) ? streamed : kept;
        const response = await get(url, accept === undefined ? {} : { 'accept-encoding': accept });
        assert.equal(response.statusCode, 200, `${url} ${accept}`);
        assert.equal(response.headers['content-encoding'], expected, `${url} ${accept}`);
        assert.match(String(response.headers.vary), /Accept-Encoding/, `${url} ${accept}`);
        assert.equal(decode(expected, response.rawPayload), plain, `${url} ${accept}`);
        if (expected !== undefined && !isStreamed(url)) {
          assert.equal(Number(response.headers['content-length']), response.rawPayload.length, `${url} ${accept}`);
        }
      }
    }
  });

  it('prefers gzip for everything when the response cache is off', async () => {
    const uncached = await startTestApp(undefined, { responseCacheBytes: 0 });
    try {
      for (const url of ['/organizations', '/organizations?format=ndjson']) {
        const response = await uncached.app.inject({ url: `${API}${url}`, headers: { 'accept-encoding': 'br, gzip' } });
        assert.equal(response.headers['content-encoding'], 'gzip', url);
        assert.match(String(response.headers.etag), /-gz"$/, url);
      }
    } finally {
      await uncached.close();
    }
  });

  it('gives each coding its own strong ETag, and revalidates each against its own', async () => {
    const url = '/organizations?per_page=4';
    const etags = new Map<string, string>();
    for (const accept of ['br', 'gzip', 'identity']) etags.set(accept, String((await get(url, { 'accept-encoding': accept })).headers.etag));
    assert.equal(new Set(etags.values()).size, 3);
    assert.match(etags.get('br')!, /-br"$/);
    assert.match(etags.get('gzip')!, /-gz"$/);
    for (const [accept, etag] of etags) {
      const revalidated = await get(url, { 'accept-encoding': accept, 'if-none-match': etag });
      assert.equal(revalidated.statusCode, 304, accept);
      assert.equal(revalidated.headers.etag, etag);
    }
    // A gzip copy does not validate what a brotli client would be sent.
    assert.equal((await get(url, { 'accept-encoding': 'br', 'if-none-match': etags.get('gzip')! })).statusCode, 200);
  });

  it('answers HEAD with the headers of the compressed GET and no body', async () => {
    const headers = { 'accept-encoding': 'br' };
    const got = await get('/organizations?per_page=7', headers);
    const head = await get('/organizations?per_page=7', headers, 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.rawPayload.length, 0);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.headers['content-length'], got.headers['content-length']);
    assert.equal(head.headers.etag, got.headers.etag);
  });

  it('leaves small error documents as they are, still saying they vary', async () => {
    const response = await get('/organizations?page=0', { 'accept-encoding': 'br, gzip' });
    assert.equal(response.statusCode, 400);
    assert.equal(response.headers['content-encoding'], undefined);
    assert.match(String(response.headers.vary), /Accept-Encoding/);
    assert.equal(JSON.parse(response.body).status, 400);
  });
});

describe('compressBuffer', () => {
  it('gives the whole body back when the compressed form spans many output chunks', async () => {
    const { compressBuffer } = await import('../../src/http/encoding.ts');
    const { randomBytes } = await import('node:crypto');
    // Random text hardly compresses: about 180 kB out, many times the output chunk.
    const body = Buffer.from(randomBytes(135_000).toString('base64'));
    assert.ok(brotliDecompressSync(compressBuffer(body, 'br')).equals(body));
    assert.ok(gunzipSync(compressBuffer(body, 'gzip')).equals(body));
  });
});
