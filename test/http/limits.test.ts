import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { MAX_URL_LENGTH } from '../../src/http/limits.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import { API, startTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';

/** Sends raw bytes to a server and collects what comes back until it closes the connection. */
function exchange(port: number, request: string, { endAfterWrite = false } = {}): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(request);
      if (endAfterWrite) socket.end();
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, closedAfterMs: performance.now() - started }));
  });
}

const problemOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe('limits on requests', () => {
  let test: TestApp;
  let server: FastifyInstance;
  let port: number;
  before(async () => {
    test = await startTestApp();
    // A listening server over the same snapshot, with a short head timeout to test it.
    server = await buildApp({ stores: fixedStore(new SqliteStore(test.snapshot)), logLevel: 'silent', headersTimeoutMs: 500 });
    await server.listen({ port: 0, host: '127.0.0.1' });
    port = (server.server.address() as { port: number }).port;
  });
  after(async () => {
    await server.close();
    await test.close();
  });

  it(`answers a request target longer than ${MAX_URL_LENGTH} characters with a 414 problem`, async () => {
    const response = await test.app.inject(`${API}/organizations?search=food&x=${'a'.repeat(MAX_URL_LENGTH)}`);
    assert.equal(response.statusCode, 414);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    assert.equal((await test.app.inject(`${API}/organizations?x=${'a'.repeat(MAX_URL_LENGTH - 100)}`)).statusCode, 200);
  });

  it(`answers a path id that makes the target longer than ${MAX_URL_LENGTH} characters with a 414 problem too`, async () => {
    for (const path of [`${API}/organizations/${'a'.repeat(8000)}`, `${API}/organizations/%zz${'a'.repeat(MAX_URL_LENGTH)}`]) {
      const response = await test.app.inject(path);
      assert.equal(response.statusCode, 414, path.slice(0, 40));
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.match(JSON.parse(response.body).detail, /at most 4096 characters/);
    }
    // An id too long for the router, in a target within the limit, names nothing.
    assert.equal((await test.app.inject(`${API}/organizations/${'a'.repeat(200)}`)).statusCode, 404);
  });

  it('answers what Node would answer itself (an Expect it cannot meet, CONNECT, a missing Host) with problems', async () => {
    const expectation = await exchange(port, `GET ${API}/ HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n`);
    assert.match(expectation.text, /^HTTP\/1\.1 417 /);
    assert.match(expectation.text, /content-type: application\/problem\+json/i);
    assert.deepEqual(problemOf(expectation.text), { type: 'about:blank', title: 'Expectation Failed', status: 417, detail: 'This server meets no expectation but 100-continue.' });
    const proceed = await exchange(port, `GET ${API}/ HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    assert.match(proceed.text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);

    for (const target of ['example.org:443', `${API}/`]) {
      const { text } = await exchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      assert.match(text, /^HTTP\/1\.1 405 /, target);
      assert.match(text, /\r\nAllow: GET, HEAD, OPTIONS\r\n/, target);
      assert.equal(problemOf(text).status, 405, target);
    }

    const hostless = await exchange(port, `GET ${API}/ HTTP/1.1\r\nConnection: close\r\n\r\n`);
    assert.match(hostless.text, /^HTTP\/1\.1 400 /);
    assert.match(problemOf(hostless.text).detail, /Host header/);
    // HTTP/1.0 has no Host requirement.
    assert.match((await exchange(port, `GET ${API}/ HTTP/1.0\r\n\r\n`)).text, /^HTTP\/1\.1 200 /);
  });

  it('answers a request that arrives while it shuts down as usual, closing the connection after it', async () => {
    const closing = await buildApp({ stores: fixedStore(new SqliteStore(test.snapshot)), logLevel: 'silent' });
    let entered!: () => void;
    let release!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    closing.get('/slow', async () => {
      entered();
      await new Promise<void>((resolve) => (release = resolve));
      return { slow: true };
    });
    await closing.listen({ port: 0, host: '127.0.0.1' });
    let requests = 0;
    let secondRequest!: () => void;
    const secondArrived = new Promise<void>((resolve) => (secondRequest = resolve));
    closing.server.on('request', () => ++requests === 2 && secondRequest());
    const socket = connect((closing.server.address() as { port: number }).port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inHandler;
    const closed = closing.close();
    // Pipelined on the kept-alive connection, after the shutdown began.
    socket.write(`GET ${API}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
    await secondArrived;
    release();
    await ended;
    await closed;
    const responses = text.split(/(?=HTTP\/1\.1 )/);
    assert.equal(responses.length, 2, text);
    assert.match(responses[1]!, /^HTTP\/1\.1 200 /);
    assert.match(responses[1]!, /\r\nConnection: close\r\n/i);
  });

  it('refuses a body on a GET with a 400 problem, and takes an empty one', async () => {
    const withBody = await test.app.inject({ method: 'GET', url: `${API}/organizations`, payload: '{"search":"food"}', headers: { 'content-type': 'application/json' } });
    assert.equal(withBody.statusCode, 400);
    assert.match(JSON.parse(withBody.body).detail, /no request body/);
    assert.equal((await test.app.inject({ method: 'GET', url: `${API}/organizations`, headers: { 'content-length': '0' } })).statusCode, 200);
  });

  it('answers a request head over 16 KiB with a 431 problem and closes the connection', async () => {
    const { text } = await exchange(port, `GET ${API}/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 431 /);
    assert.match(text, /Content-Type: application\/problem\+json/i);
    assert.equal(problemOf(text).status, 431);
  });

  it('answers malformed HTTP with a 400 problem', async () => {
    const { text } = await exchange(port, 'GARBAGE\r\n\r\n');
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.equal(problemOf(text).status, 400);
  });

  it('answers the valid requests of a pipeline before the malformed one that ends it: their answers, then a 400, then the connection closes', async () => {
    const pipeline = [`${API}/organizations?per_page=1`, `${API}/taxonomies`].map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join('') + 'GARBAGE\r\n\r\n';
    const { text } = await exchange(port, pipeline);
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    assert.deepEqual(statuses, [200, 200, 400], text.slice(0, 300));
    const last = text.slice(text.lastIndexOf('HTTP/1.1 400 '));
    assert.match(last, /\r\nConnection: close\r\n/i);
    assert.equal(problemOf(last).status, 400);
  });

  it('answers a request with more than one Host header with a 400 problem (RFC 9112), also where a cached answer is ready', async () => {
    const target = `${API}/taxonomies?per_page=2`;
    assert.match((await exchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).text, /^HTTP\/1\.1 200 /);
    for (const hosts of ['Host: x\r\nHost: y', 'Host: x\r\nhost: x']) {
      const { text } = await exchange(port, `GET ${target} HTTP/1.1\r\n${hosts}\r\nConnection: close\r\n\r\n`);
      assert.match(text, /^HTTP\/1\.1 400 /, hosts);
      assert.match(problemOf(text).detail, /one Host header/, hosts);
    }
  });

  it('cuts off a client that sends its head too slowly, and goes on serving others meanwhile', async () => {
    const slow = exchange(port, `GET ${API}/ HTTP/1.1\r\nHost: x\r\n`); // and never the blank line
    const others = await fetch(`http://127.0.0.1:${port}${API}/organizations`);
    assert.equal(others.status, 200);
    const { text, closedAfterMs } = await slow;
    assert.ok(closedAfterMs >= 450 && closedAfterMs < 3000, `closed after ${closedAfterMs} ms`);
    assert.match(text, /^HTTP\/1\.1 408 /);
  });
});
