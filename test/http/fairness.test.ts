import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import type { AppOptions } from '../../src/http/app.ts';
import { IDLE_TIMEOUT_MS } from '../../src/http/limits.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { StoreProvider } from '../../src/store/store.ts';
import { bulkOrganizations, fixtureDataset } from '../fixtures/dataset.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

const EXPORT = `${API}/organizations?format=ndjson&full=true`;

/** Enough organizations that an export (about 30 MB) outlasts what socket buffers hold. */
const many = bulkOrganizations(6000);

/** The client process of the first test: an export read at full speed, and two requests once it has begun. */
const CLIENT = `
const { get } = require('node:http');
const { connect } = require('node:net');
const [port, exportPath, ...others] = process.argv.slice(1);
const fetch = (path) => new Promise((resolve, reject) => get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
  response.resume();
  response.on('end', resolve);
}).on('error', reject));
// The export over a bare socket, its bytes only counted: read faster than an HTTP parser would.
const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET ' + exportPath + ' HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'));
const ended = new Promise((resolve) => socket.on('end', resolve));
socket.once('data', () => Promise.all([ended, ...others.map(fetch)]).then(() => process.exit(0)));
socket.on('data', () => {});
socket.on('error', () => process.exit(1));
`;

interface Served {
  app: FastifyInstance;
  port: number;
  /** Dataset leases held now. */
  leases: () => number;
}

/** Sends GETs (pipelined, when more than one) and never reads the answers: a stalled client. */
function stalledClient(port: number, path: string, { pipelined = 1, headers = '' } = {}): Socket {
  const head = `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;
  const socket = connect(port, '127.0.0.1', () => socket.write(head.repeat(pipelined)));
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

/** A request's status, headers and body. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('no request starves another', () => {
  const directory = temporaryDirectory();
  let store: SqliteStore;
  const servers: FastifyInstance[] = [];

  before(async () => {
    const file = join(directory.path, 'snapshot.sqlite');
    await buildSnapshot(fixtureDataset({ organizations: many }), file);
    store = new SqliteStore(file);
  });
  after(async () => {
    for (const app of servers) await app.close();
    await store.close();
    directory.remove();
  });

  /** A listening app over the shared snapshot, counting its dataset leases. */
  async function serve(options: Partial<AppOptions> = {}, setup: (app: FastifyInstance) => void = () => {}): Promise<Served> {
    let leases = 0;
    const stores: StoreProvider = {
      acquire: () => {
        leases++;
        let released = false;
        return {
          store,
          release: () => {
            if (!released) leases--;
            released = true;
          },
        };
      },
      readiness: async () => ({ ready: true }),
      close: async () => {},
    };
    const app = await buildApp({ stores, logLevel: 'silent', ...options });
    servers.push(app);
    setup(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    return { app, port: (app.server.address() as { port: number }).port, leases: () => leases };
  }

  it('answers a probe and a page while an uncompressed export is under way, before it ends', async () => {
    const finished: string[] = [];
    const { port } = await serve({}, (app) => {
      app.addHook('onResponse', async (request) => {
        finished.push(request.url);
      });
    });
    // Another process, as real clients are: it reads the export as fast as it can (no
    // Accept-Encoding: identity) and, once its first bytes have come, asks for a probe and a page.
    const client = spawn(process.execPath, ['-e', CLIENT, String(port), EXPORT, '/healthz', `${API}/organizations?per_page=1`], { stdio: 'inherit' });
    const code = await new Promise((resolve) => client.once('exit', resolve));
    assert.equal(code, 0);
    await waitFor(() => finished.length === 3);
    assert.equal(finished.at(-1), EXPORT, `the export ended last: ${finished.join(', ')}`);
  });

  it(`cuts a client that takes no bytes for the idle time (${IDLE_TIMEOUT_MS / 1000} s, as docs/operations.md says), not longer, releasing its dataset`, async () => {
    const documented = /\| a response making no progress [^|]*\| (\d+) s \|/.exec(readFileSync('docs/operations.md', 'utf8'));
    assert.equal(Number(documented?.[1]) * 1000, IDLE_TIMEOUT_MS, 'the default is the documented figure');
    const idleTimeoutMs = 3000;
    const { port, leases } = await serve({ idleTimeoutMs });
    const client = stalledClient(port, EXPORT);
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    try {
      await waitFor(() => leases() === 1, 5000, 'the export to hold its lease');
      // The client stops taking bytes once the socket buffers are full, a moment after the export began.
      const held = await waitFor(() => leases() === 0, 3 * idleTimeoutMs, 'the lease to be released');
      assert.ok(held >= idleTimeoutMs - 100, `held ${Math.round(held)} ms, within the idle time`);
      // Node's own socket timeout lets a write that the client took a part of run a second period.
      assert.ok(held < 1.6 * idleTimeoutMs, `cut ${Math.round(held)} ms after the export began, not about twice the idle time`);
      // The server closed the connection: the client, reading again, sees it end.
      client.resume();
      await closed;
    } finally {
      client.destroy();
    }
  });

  it('gives a connection one export at a time: one that pipelines exports and reads nothing holds one, and another client still gets its export', async (t) => {
    const { port, leases } = await serve({ maxExports: 8 });
    const client = stalledClient(port, EXPORT, { pipelined: 8 });
    t.after(() => client.destroy());
    // Each pipelined request is read (and holds the dataset) while it waits for its turn on the connection.
    await waitFor(() => leases() === 8, 5000, 'the eight requests to arrive');
    const other = await get(port, `${API}/taxonomies?format=ndjson`);
    assert.equal(other.status, 200, other.body);
  });

  it('answers pipelined exports one after another, each when its turn on the connection comes', async () => {
    const { port } = await serve({ maxExports: 1 });
    const path = `${API}/taxonomies?format=ndjson`;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(2) + `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    assert.deepEqual([...text.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((match) => Number(match[1])), [200, 200, 200], text.slice(0, 500));
  });

  it('gives each client address a share of the exports (a quarter, at least one): past it, a 429 problem with Retry-After', async (t) => {
    // Addresses as a trusted proxy on the loopback interface names them.
    const { port, leases } = await serve({ maxExports: 8, trustProxy: ['loopback'] });
    const from = (address: string) => ({ headers: `X-Forwarded-For: ${address}\r\n` });
    const clients = [stalledClient(port, EXPORT, from('192.0.2.1')), stalledClient(port, EXPORT, from('192.0.2.1'))];
    t.after(() => clients.forEach((client) => client.destroy()));
    await waitFor(() => leases() === 2, 5000, 'two exports under way');
    const refused = await get(port, EXPORT, { 'x-forwarded-for': '192.0.2.1' });
    assert.equal(refused.status, 429);
    assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
    assert.equal(refused.headers['retry-after'], '10');
    assert.equal(refused.headers['cache-control'], 'no-store');
    assert.match(JSON.parse(refused.body).detail, /2 exports under way from 192\.0\.2\.1, the most one client may run at once/);
    // An export pipelined behind another request is refused the same way when its turn comes.
    const pipelined = await new Promise<string>((resolve, reject) => {
      const head = (path: string, last = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.1\r\n${last}\r\n`;
      const socket = connect(port, '127.0.0.1', () => socket.write(head(`${API}/taxonomies`) + head(`${API}/taxonomies?format=ndjson`, 'Connection: close\r\n')));
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    assert.deepEqual([...pipelined.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])), [200, 429], pipelined.slice(0, 300));
    assert.equal((await get(port, `${API}/taxonomies?format=ndjson`, { 'x-forwarded-for': '192.0.2.2' })).status, 200, 'another client is served');
    clients[0]!.destroy();
    await waitFor(() => leases() === 1, 5000, 'the first export to end');
    assert.equal((await get(port, `${API}/taxonomies?format=ndjson`, { 'x-forwarded-for': '192.0.2.1' })).status, 200);
  });

  it('answers exports past the limit with a 503 problem, Retry-After and no-store, until one ends', async (t) => {
    const { port, leases } = await serve({ maxExports: 2, trustProxy: ['loopback'] });
    const clients = ['192.0.2.1', '192.0.2.2'].map((address) => stalledClient(port, EXPORT, { headers: `X-Forwarded-For: ${address}\r\n` }));
    t.after(() => clients.forEach((client) => client.destroy()));
    await waitFor(() => leases() === 2, 5000, 'two exports under way');
    const refused = await get(port, EXPORT, { 'x-forwarded-for': '192.0.2.3' });
    assert.equal(refused.status, 503);
    assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
    assert.equal(refused.headers['retry-after'], '10');
    assert.equal(refused.headers['cache-control'], 'no-store');
    assert.match(JSON.parse(refused.body).detail, /2 exports are under way/);
    assert.equal(leases(), 2, 'a refused export takes no lease beyond its request');
    // Pages are not exports.
    assert.equal((await get(port, `${API}/organizations?per_page=1`)).status, 200);
    clients[0]!.destroy();
    await waitFor(() => leases() === 1, 5000, 'the first export to end');
    assert.equal((await get(port, `${API}/taxonomies?format=ndjson`, { 'x-forwarded-for': '192.0.2.3' })).status, 200);
  });

  it('sheds requests with a 503 problem while the event loop lags, and still answers health probes and cache hits', async () => {
    const { port } = await serve({ loadShedding: { maxEventLoopDelayMs: 50, sampleIntervalMs: 400 } });
    const served = async () => (await get(port, `${API}/organizations?per_page=1`)).status === 200;
    // Building the snapshot and the app lagged too: served once that has passed.
    await waitFor(served, 5000, 'a calm loop');
    // A lag: the loop blocked for 1 s, then one turn for the sampler (due meanwhile) to see it; the
    // next sample comes 400 ms later.
    const until = performance.now() + 1000;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const [shed, hit, healthz, readyz] = await Promise.all([
      get(port, `${API}/organizations?per_page=1&page=2`),
      get(port, `${API}/organizations?per_page=1`),
      get(port, '/healthz'),
      get(port, '/readyz'),
    ]);
    assert.equal(shed.status, 503);
    assert.match(String(shed.headers['content-type']), /^application\/problem\+json/);
    assert.equal(shed.headers['retry-after'], '5');
    assert.equal(shed.headers['cache-control'], 'no-store');
    assert.match(JSON.parse(shed.body).detail, /overloaded/);
    assert.equal(hit.status, 200, 'a response kept in the cache costs next to nothing: it is sent');
    assert.equal(healthz.status, 200);
    assert.equal(readyz.status, 200);
    // Once the lag has passed, requests are served again.
    await waitFor(served, 5000, 'the lag to pass');
  });
});
