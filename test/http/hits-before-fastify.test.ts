import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
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
const VOLATILE = ['date', 'connection', 'keep-alive', 'x-request-id'];
/** With the rate limit on, what is left of the client's minute changes with every request too (checked apart). */
const RATE_LIMIT_COUNTDOWN = ['x-ratelimit-remaining', 'x-ratelimit-reset'];
/** Without those, and without the `content-length: 0` Node's server adds to a stream that ends empty (light-my-request does not). */
const stable = (headers: Record<string, unknown>, volatile: readonly string[] = VOLATILE) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name, value]) => !volatile.includes(name) && !(name === 'content-length' && value === '0' && headers['content-type'] === 'application/x-ndjson; charset=utf-8'))
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

/** An app on a socket, counting the requests answered before Fastify. */
function listeningApp(options: { rateLimitPerMinute?: number } = {}) {
  const directory = temporaryDirectory();
  const state = { app: undefined as unknown as FastifyInstance, port: 0, answeredBeforeFastify: 0 };
  before(async () => {
    const file = join(directory.path, 'snapshot.sqlite');
    await buildSnapshot(dataset(), file, { now });
    state.app = await buildApp({ stores: fixedStore(new SqliteStore(file)), logLevel: 'silent', ...options });
    const answerHit = state.app.answerHit!;
    state.app.answerHit = (request, response) => {
      const answered = answerHit(request, response);
      if (answered) state.answeredBeforeFastify++;
      return answered;
    };
    await state.app.listen({ host: '127.0.0.1', port: 0 });
    state.port = (state.app.server.address() as { port: number }).port;
  });
  after(async () => {
    await state.app.close();
    directory.remove();
  });
  return state;
}

/** Each request of a path, in every coding, as GET, HEAD and a revalidation, over the socket and through Fastify: the same answer. */
async function compareBothPaths(app: FastifyInstance, port: number, path: string, volatile: readonly string[]): Promise<void> {
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
      assert.deepEqual(stable(socket.headers, volatile), stable(injected.headers, volatile), label);
      assert.ok(socket.body.equals(injected.rawPayload), `${label}: the bodies differ`);
    }
  }
}

describe('a cache hit answered before Fastify', () => {
  const served = listeningApp();

  for (const path of PATHS) it(`GET ${path}`, () => compareBothPaths(served.app, served.port, path, VOLATILE));

  it('sends a kept page with the headers its route set for it (the security policy of the profile page)', async () => {
    const { app, port } = served;
    const url = `${API}/profile`;
    const headers = { accept: 'text/html', host: `127.0.0.1:${port}` };
    const made = await overSocket(port, 'GET', url, headers);
    assert.match(String(made.headers['content-security-policy']), /default-src 'none'/);
    const kept = [await overSocket(port, 'GET', url, headers), await app.inject({ method: 'GET', url, headers })];
    for (const answer of kept) assert.equal(answer.headers['content-security-policy'], made.headers['content-security-policy']);
  });

  it('answered the hits before Fastify, and counted them in /metrics', async () => {
    const { app, port } = served;
    assert.ok(served.answeredBeforeFastify > 100, `${served.answeredBeforeFastify} answered before Fastify`);
    const before = served.answeredBeforeFastify;
    const path = `${API}/organizations?per_page=3&page=2`;
    const count = async () => {
      const metrics = (await app.inject('/metrics')).body;
      const line = metrics.split('\n').find((text) => text.startsWith('hsds_http_requests_total{') && text.includes('route="/api/hsds/v3/organizations"') && text.includes('status="200"') && text.includes('method="GET"'));
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const counted = await count();
    for (let index = 0; index < 5; index++) assert.equal((await overSocket(port, 'GET', path, { host: `127.0.0.1:${port}` })).status, 200);
    assert.equal(served.answeredBeforeFastify, before + 5);
    assert.equal(await count(), counted + 5);
  });
});

describe('a cache hit answered before Fastify, with the rate limit on', () => {
  const served = listeningApp({ rateLimitPerMinute: 1_000_000 });

  for (const path of PATHS) it(`GET ${path}`, () => compareBothPaths(served.app, served.port, path, [...VOLATILE, ...RATE_LIMIT_COUNTDOWN]));

  it('counts hits in the same minute as the requests Fastify answers, one each', async () => {
    const { app, port } = served;
    const url = `${API}/taxonomies`;
    const headers = { host: `127.0.0.1:${port}` };
    await overSocket(port, 'GET', url, headers);
    const before = served.answeredBeforeFastify;
    const remaining: number[] = [];
    for (let index = 0; index < 3; index++) {
      remaining.push(Number((await overSocket(port, 'GET', url, headers)).headers['x-ratelimit-remaining']));
      remaining.push(Number((await app.inject({ url, headers })).headers['x-ratelimit-remaining']));
    }
    assert.equal(served.answeredBeforeFastify, before + 3);
    assert.deepEqual(remaining, remaining.map((_value, index) => remaining[0]! - index));
  });
});

describe('a client over the rate limit, asking for a kept response', () => {
  const served = listeningApp({ rateLimitPerMinute: 3 });

  it('has its hits answered before Fastify while under the limit, and a 429 from Fastify past it', async () => {
    const { port } = served;
    const url = `${API}/taxonomies`;
    const headers = { host: `127.0.0.1:${port}` };
    const statuses: number[] = [];
    for (let index = 0; index < 5; index++) statuses.push((await overSocket(port, 'GET', url, headers)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    // The first filled the cache; the next two were hits.
    assert.equal(served.answeredBeforeFastify, 2);
  });
});
