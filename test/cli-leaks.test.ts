import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { temporaryDirectory } from './helpers/app.ts';
import { NATIVE_EXAMPLE } from './helpers/imports.ts';
import { freePort, waitFor } from './helpers/wait.ts';
import type { ChildProcess } from 'node:child_process';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;
const REPO = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const API = '/api/hsds/v3';
const RATE_LIMIT = 40;

/** What only the server could have put in a response or a log line: its code, its files, its SQL. */
const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\bat \S+ \(|\bat (file|node):|\\n\s+at /],
  ['a stack field', /"stack"/],
  ['a file path', new RegExp(`${escape(REPO)}|${escape(tmpdir())}/|node_modules|\\.ts:\\d|file://|node:internal`)],
  ['SQL', /\bSELECT\b|\bFROM [a-z_]+\b|\bWHERE\b|SQLITE_|sqlite|syntax error|\brelation "/i],
];

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function assertNoLeak(text: string, where: string): void {
  for (const [what, pattern] of LEAKS) assert.doesNotMatch(text, pattern, `${what} in ${where}: ${text.slice(0, 600)}`);
}

/** Sends raw bytes on a new connection and reads until the server closes it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => resolve(received));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(received) : reject(error)));
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(bytes.slice(0, 80))}`)));
    socket.write(bytes);
  });
}

const get = (target: string, headers: string[] = []): string => [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers, '', ''].join('\r\n');

/** Bad requests of every kind a client can send, each with the status it must get. */
const BAD_REQUESTS: { name: string; bytes: string; status: number }[] = [
  { name: 'unknown path', bytes: get('/nowhere/at/all'), status: 404 },
  { name: 'unknown id', bytes: get(`${API}/organizations/00000000-0000-0000-0000-000000000000`), status: 404 },
  { name: 'bad parameter', bytes: get(`${API}/organizations?page=abc&per_page=-1`), status: 400 },
  { name: 'unknown term', bytes: get(`${API}/organizations?taxonomy_term_id=no-such-term`), status: 400 },
  { name: 'broken percent-encoding in the path', bytes: get(`${API}/organizations/%E0%A4%A`), status: 404 },
  { name: 'a percent sign that does not decode, searched for as it is', bytes: get(`${API}/organizations?search=%zz`), status: 200 },
  { name: 'search too long', bytes: get(`${API}/organizations?search=${'a'.repeat(1000)}`), status: 400 },
  { name: 'page beyond any', bytes: get(`${API}/organizations?page=99999999999999999999&per_page=100`), status: 400 },
  { name: 'bad date', bytes: get(`${API}/organizations?modified_after=2026-02-30`), status: 400 },
  { name: 'unknown format', bytes: get(`${API}/organizations?format=xml`), status: 400 },
  { name: 'a write', bytes: ['POST /api/hsds/v3/organizations HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 2', 'Connection: close', '', '{}'].join('\r\n'), status: 405 },
  { name: 'a body on a GET', bytes: ['GET /api/hsds/v3/organizations HTTP/1.1', 'Host: x', 'Content-Length: 5', 'Connection: close', '', 'hello'].join('\r\n'), status: 400 },
  { name: 'a target too long', bytes: get(`${API}/organizations?search=${'b'.repeat(5000)}`), status: 414 },
  { name: 'a head too large', bytes: get(`${API}/organizations`, [`X-Filler: ${'c'.repeat(20_000)}`]), status: 431 },
  { name: 'not HTTP', bytes: 'HELLO THERE\r\n\r\n', status: 400 },
  { name: 'a bad header line', bytes: 'GET / HTTP/1.1\r\nHost x\r\n\r\n', status: 400 },
  { name: 'an unknown method', bytes: ['PROPFIND / HTTP/1.1', 'Host: x', 'Connection: close', '', ''].join('\r\n'), status: 405 },
  { name: 'a conditional with garbage', bytes: get(`${API}/organizations`, ['If-None-Match: "x', 'If-Modified-Since: yesterday']), status: 200 },
];

describe('the leak check', () => {
  it('catches a stack, a path of the server and SQL', () => {
    const error = new Error('near "FROM": syntax error');
    assert.throws(() => assertNoLeak(JSON.stringify({ err: { message: 'x', stack: error.stack } }), 'a stack'));
    assert.throws(() => assertNoLeak(`could not open ${REPO}/data/snapshots/1.sqlite`, 'a path'));
    assert.throws(() => assertNoLeak('SELECT id FROM organizations WHERE rowid = ?', 'SQL'));
    assertNoLeak('{"title":"Not Found","status":404,"detail":"No organization has this id."}', 'a problem');
  });
});

describe('bad requests leak nothing (a real server, default log level)', () => {
  const data = temporaryDirectory();
  let server: ChildProcess;
  let port: number;
  let output = '';
  let messages = '';

  before(async () => {
    assert.equal(spawnSync(process.execPath, [BIN, 'import', '--data-dir', data.path, '--progress', 'none', NATIVE_EXAMPLE]).status, 0);
    port = await freePort();
    server = spawn(process.execPath, [BIN, 'serve', '--data-dir', data.path, '--port', String(port), '--host', '127.0.0.1', '--rate-limit', String(RATE_LIMIT)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The log on stdout; the command's own lines (where it serves) on stderr.
    server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (messages += chunk));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200, 15_000, 'the server');
  });

  after(async () => {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
    data.remove();
  });

  it('answers each with its status and a problem of our own words only', async () => {
    for (const request of BAD_REQUESTS) {
      const response = await exchange(port, request.bytes);
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(response)?.[1]);
      assert.equal(status, request.status, `${request.name}: ${response.slice(0, 300)}`);
      if (status >= 400) assert.match(response, /\r\ncontent-type: application\/problem\+json/i, request.name);
      assertNoLeak(response, `the response to ${request.name}`);
    }
  });

  it('answers a client over the rate limit with a 429 problem that leaks nothing', async () => {
    let response = '';
    for (let sent = 0; sent <= RATE_LIMIT && !response.startsWith('HTTP/1.1 429'); sent++) response = await exchange(port, get(`${API}/taxonomies`));
    assert.match(response, /^HTTP\/1\.1 429 /);
    assertNoLeak(response, 'the 429');
  });

  it('logs every request as one JSON line, with no stack, SQL or path', async () => {
    await waitFor(() => output.includes('"statusCode":429'), 5000, 'the log of the 429');
    const lines = output.trim().split('\n');
    const statuses = new Set<number>();
    for (const line of lines) {
      const entry = JSON.parse(line);
      if (entry.res?.statusCode !== undefined) statuses.add(entry.res.statusCode);
      // The request line is the client's own text; everything else is the server's.
      delete entry.req?.url;
      assertNoLeak(JSON.stringify(entry), 'a log line');
    }
    for (const status of [400, 404, 405, 414, 429]) assert.ok(statuses.has(status), `a ${status} was logged`);
    assert.match(messages, /^Serving http:\/\/127\.0\.0\.1:\d+\/ .*\n$/, 'only where it serves, on stderr');
  });
});
