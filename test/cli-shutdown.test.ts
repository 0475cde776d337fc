import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { temporaryDirectory } from './helpers/app.ts';
import { NATIVE_EXAMPLE } from './helpers/imports.ts';
import { freePort, waitFor } from './helpers/wait.ts';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;


describe('shutting down', () => {
  it('on SIGTERM completes a response already under way, stops listening, and exits 0', async () => {
    const data = temporaryDirectory();
    try {
      assert.equal(spawnSync(process.execPath, [BIN, 'import', '--data-dir', data.path, '--progress', 'none', NATIVE_EXAMPLE]).status, 0);
      const port = await freePort();
      const server = spawn(process.execPath, [BIN, 'serve', '--data-dir', data.path, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'silent'], { stdio: 'ignore' });
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      const origin = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${origin}/healthz`).catch(() => undefined))?.status === 200, 15_000, 'the server');
      // The signal comes once the response has begun.
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const outgoing = request(`${origin}/api/hsds/v3/organizations?format=ndjson`, (response) => {
          server.kill('SIGTERM');
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        });
        outgoing.on('error', reject);
        outgoing.end();
      });
      const finished = await inFlight;
      assert.equal(finished.status, 200);
      assert.equal(finished.body.trim().split('\n').length, 4, 'every published organization of the example');
      const started = performance.now();
      assert.equal(await exited, 0);
      assert.ok(performance.now() - started < 10_000, 'within the grace period');
      await assert.rejects(fetch(`${origin}/healthz`), 'nothing listens any more');
    } finally {
      data.remove();
    }
  });
});
