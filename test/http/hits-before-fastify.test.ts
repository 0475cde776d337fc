import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { buildSnapshot } from '../../src/publish/build.ts';
import { SqliteStore } from '../../src/store/sqlite.ts';
import { fixedStore } from '../../src/store/store.ts';
import { dataset, now, PATHS } from '../helpers/backend-requests.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';

/**
 * A response kept in the response cache is answered before Fastify (response-cache.ts, answerHit).
 * Every request of backends.test.ts, in every coding, as GET, HEAD and a revalidation, is asked over
 * a socket (where hits are answered so) and through Fastify (app.inject, which never takes that path):
 * the status, headers and body must be the same.
 */

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Buffer;
}

/** Headers that differ from one response to the next, whoever sends them. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id']);
/** Without those, and without the `content-length: 0` Node's server adds to a stream that ends empty (light-my-request does not). */
const stable = (headers: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name, value]) => !VOLATILE.has(name) && !(name === 'content-length' && value === '0' && headers['content-type'] === 'application/x-ndjson; charset=utf-8'))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

function overSocket(port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('a cache hit answered before Fastify', () => {
  const directory = temporaryDirectory();
  let app: FastifyInstance;
  let port: number;
  let answeredBeforeFastify = 0;

  before(async () => {
    const file = join(directory.path, 'snapshot.sqlite');
    await buildSnapshot(dataset(), file, { now });
    app = await buildApp({ stores: fixedStore(new SqliteStore(file)), logLevel: 'silent' });
    const answerHit = app.answerHit!;
    app.answerHit = (request, response) => {
      const answered = answerHit(request, response);
      if (answered) answeredBeforeFastify++;
      return answered;
    };
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  after(async () => {
    await app.close();
    directory.remove();
  });

  for (const path of PATHS) {
    it(`GET ${path}`, async () => {
      const url = `${API}${path}`;
      for (const encoding of ['identity', 'gzip', 'br', 'gzip, br']) {
        const headers = { 'accept-encoding': encoding, host: `127.0.0.1:${port}` };
        // The first answer fills the cache when the response may be kept.
        const first = await overSocket(port, 'GET', url, headers);
        const etag = typeof first.headers.etag === 'string' ? first.headers.etag : undefined;
        const variants: [string, Record<string, string>][] = [
          ['GET', headers],
          ['HEAD', headers],
          ...(etag === undefined ? [] : ([['GET', { ...headers, 'if-none-match': etag }]] as [string, Record<string, string>][])),
        ];
        for (const [method, sent] of variants) {
          const socket = await overSocket(port, method, url, sent);
          const injected = await app.inject({ method: method as 'GET' | 'HEAD', url, headers: sent });
          const label = `${method} ${encoding}${sent['if-none-match'] === undefined ? '' : ' revalidated'}`;
          assert.equal(socket.status, injected.statusCode, label);
          assert.deepEqual(stable(socket.headers), stable(injected.headers), label);
          assert.ok(socket.body.equals(injected.rawPayload), `${label}: the bodies differ`);
        }
      }
    });
  }

  it('sends a kept page with the headers its route set for it (the security policy of the profile page)', async () => {
    const url = `${API}/profile`;
    const headers = { accept: 'text/html', host: `127.0.0.1:${port}` };
    const made = await overSocket(port, 'GET', url, headers);
    assert.match(String(made.headers['content-security-policy']), /default-src 'none'/);
    const kept = [await overSocket(port, 'GET', url, headers), await app.inject({ method: 'GET', url, headers })];
    for (const answer of kept) assert.equal(answer.headers['content-security-policy'], made.headers['content-security-policy']);
  });

  it('answered the hits before Fastify, and counted them in /metrics', async () => {
    assert.ok(answeredBeforeFastify > 100, `${answeredBeforeFastify} answered before Fastify`);
    const before = answeredBeforeFastify;
    const path = `${API}/organizations?per_page=3&page=2`;
    const count = async () => {
      const metrics = (await app.inject('/metrics')).body;
      const line = metrics.split('\n').find((text) => text.startsWith('hsds_http_requests_total{') && text.includes('route="/api/hsds/v3/organizations"') && text.includes('status="200"') && text.includes('method="GET"'));
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const counted = await count();
    for (let index = 0; index < 5; index++) assert.equal((await overSocket(port, 'GET', path, { host: `127.0.0.1:${port}` })).status, 200);
    assert.equal(answeredBeforeFastify, before + 5);
    assert.equal(await count(), counted + 5);
  });
});
