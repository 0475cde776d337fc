import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { API, useTestApp } from '../helpers/app.ts';

const decode = (coding: unknown, body: Buffer): string =>
  (coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body).toString('utf8');

describe('compression', () => {
  const test = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
    test().app.inject({ method, url: `${API}${url}`, headers });

  it('sends brotli or gzip as Accept-Encoding prefers, the same document in each, and says it varies', async () => {
    const cases: [string | undefined, string | undefined][] = [
      [undefined, undefined],
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=0.5, br;q=0.9', 'br'],
      ['deflate', undefined],
      ['identity', undefined],
      ['*', 'br'],
    ];
    for (const url of ['/organizations?per_page=3', '/organizations?format=ndjson', '/taxonomy_terms?per_page=100', '/openapi.json', '/']) {
      const plain = (await get(url)).body;
      for (const [accept, expected] of cases) {
        const response = await get(url, accept === undefined ? {} : { 'accept-encoding': accept });
        assert.equal(response.statusCode, 200, `${url} ${accept}`);
        assert.equal(response.headers['content-encoding'], expected, `${url} ${accept}`);
        assert.match(String(response.headers.vary), /Accept-Encoding/, `${url} ${accept}`);
        assert.equal(decode(expected, response.rawPayload), plain, `${url} ${accept}`);
        if (expected !== undefined && !url.includes('ndjson')) {
          assert.equal(Number(response.headers['content-length']), response.rawPayload.length, `${url} ${accept}`);
        }
      }
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
