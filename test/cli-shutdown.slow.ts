import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { temporaryDirectory } from './helpers/app.ts';
import { nativeSourceDir } from './helpers/imports.ts';
import { freePort, waitFor } from './helpers/wait.ts';
import type { IncomingMessage } from 'node:http';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;
/** Enough organizations that their export (about 25 MiB) cannot sit whole in the sockets' buffers. */
const ORGANIZATIONS = 40_000;
const SHUTDOWN_TIMEOUT_SECONDS = 3;

function manyOrganizations(count: number): string {
  const description = 'Answers the telephone, keeps a pantry, and drives people to appointments across the county. '.repeat(4);
  const rows = ['id,name,status,alternate_name,description,email,website,tax_status,tax_id,year_incorporated,legal_status,uri,parent_id'];
  for (let index = 0; index < count; index++) rows.push(`BULK-${index},Bulk Organization ${index},published,,"${description}",,,,,,,,`);
  return `${rows.join('\n')}\n`;
}

/** A running `serve`, its exit code and when it exited. */
function serve(dataDir: string, port: number) {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'silent', '--shutdown-timeout', String(SHUTDOWN_TIMEOUT_SECONDS)], { stdio: 'ignore' });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: performance.now() })));
  return { child, exited };
}

/** Starts the NDJSON export and resolves with the response once its first bytes arrived, paused. */
function startExport(origin: string): Promise<{ response: IncomingMessage; first: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${origin}/api/hsds/v3/organizations?format=ndjson`, (response) => {
      response.once('data', (first: Buffer) => {
        response.pause();
        resolve({ response, first });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function readRest(response: IncomingMessage, first: Buffer): Promise<{ complete: boolean; lines: number; bytes: number }> {
  return new Promise((resolve) => {
    let lines = first.toString('latin1').split('\n').length - 1;
    let bytes = first.length;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    });
    response.on('end', () => resolve({ complete: response.complete, lines, bytes }));
    response.on('error', () => resolve({ complete: false, lines, bytes }));
    response.on('close', () => resolve({ complete: response.complete, lines, bytes }));
    response.resume();
  });
}

const accepts = (origin: string) =>
  fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
    () => true,
    () => false,
  );

describe('shutting down on SIGTERM', () => {
  const data = temporaryDirectory();

  before(() => {
    const source = nativeSourceDir(join(data.path, 'source'), {
      'organizations.csv': manyOrganizations(ORGANIZATIONS),
      'organization_tags.csv': 'organization_id,taxonomy,term_code\n',
      'organization_identifiers.csv': 'organization_id,scheme,type,identifier\n',
    });
    const imported = spawnSync(process.execPath, [BIN, 'import', '--data-dir', join(data.path, 'data'), '--progress', 'none', source], { encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
  });

  after(() => data.remove());

  it('stops accepting at once, completes a long response under way, closes the store, and exits 0', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const server = serve(join(data.path, 'data'), port);
    await waitFor(() => accepts(origin), 15_000, 'the server');
    const { response, first } = await startExport(origin);
    server.child.kill('SIGTERM');
    await waitFor(async () => !(await accepts(origin)), 2000, 'the listener to close');
    // The client read nothing until the listener had closed: most of the export is still to come.
    const rest = await readRest(response, first);
    assert.equal(rest.complete, true, 'the response ended properly');
    assert.equal(rest.lines, ORGANIZATIONS, 'every organization');
    // More than loopback's socket buffers can hold (a few MiB each way): the server was still
    // writing long after the signal.
    assert.ok(rest.bytes > 16 * 2 ** 20, `${rest.bytes} bytes`);
    const { code } = await server.exited;
    assert.equal(code, 0);
  });

  it('stops too when the command is killed outright (SIGKILL, which it cannot pass on): no server is left holding the port', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const server = serve(join(data.path, 'data'), port);
    await waitFor(() => accepts(origin), 15_000, 'the server');
    server.child.kill('SIGKILL');
    await server.exited;
    await waitFor(async () => !(await accepts(origin)), 5000, 'the server behind the command to stop');
  });

  it('gives up on a response not read within --shutdown-timeout, and exits 1 then', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const server = serve(join(data.path, 'data'), port);
    await waitFor(() => accepts(origin), 15_000, 'the server');
    const { response } = await startExport(origin);
    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const { code, at } = await server.exited;
    const seconds = (at - signalled) / 1000;
    assert.equal(code, 1);
    // Not before the timeout (its timer cannot fire sooner); how much later is the machine's business.
    assert.ok(seconds >= SHUTDOWN_TIMEOUT_SECONDS - 0.05, `exited after ${seconds.toFixed(2)} s`);
    response.destroy();
  });
});
