import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { temporaryDirectory } from './helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand } from './helpers/imports.ts';
import { postgresSuite, temporaryDatabase } from './helpers/postgres.ts';
import { freePort, waitFor } from './helpers/wait.ts';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;
const WORKERS = 2;

/** A GET on a connection of its own (no keep-alive), so that the workers take requests in turn. */
function fetchOnce(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    }).on('error', reject);
  });
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Where a test serves from: the serve arguments and environment, and how to publish a source there. */
interface Backend {
  args: string[];
  env: NodeJS.ProcessEnv;
  publish(source: string): Promise<void>;
}

async function servesWithWorkers(backend: Backend, scratch: string): Promise<void> {
  const port = await freePort();
  const primary = spawn(process.execPath, [BIN, 'serve', ...backend.args, '--port', String(port), '--host', '127.0.0.1', '--workers', String(WORKERS), '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...backend.env },
  });
  // 'close', not 'exit': the process can exit before its last output has been read from the pipe.
  const exited = new Promise<number | null>((resolve) => primary.once('close', resolve));
  let pids: number[] = [];
  try {
    let output = '';
    primary.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    primary.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => /from \d+ workers \(pids/.test(output), 20_000, 'the workers to listen');
    const origin = `http://127.0.0.1:${port}`;
    assert.match(output, new RegExp(`^Serving ${origin}/ — API ${origin}/api/hsds/v3/, docs ${origin}/api/hsds/v3/docs, from ${WORKERS} workers \\(pids [\\d, ]+\\)$`, 'm'), 'said once, by the primary');
    assert.equal(output.match(/^Serving /gm)!.length, 1, 'said once');
    pids = /\(pids ([\d, ]+)\)/.exec(output)![1]!.split(', ').map(Number);
    assert.equal(pids.length, WORKERS);
    assert.ok(!pids.includes(primary.pid!) && pids.every(isAlive), 'processes of their own');

    const versionOf = async () => (JSON.parse((await fetchOnce(`${origin}/api/hsds/v3/`)).body) as { dataset: { version: string } }).dataset.version;
    const before = await versionOf();
    for (let page = 1; page <= 10; page++) assert.equal((await fetchOnce(`${origin}/api/hsds/v3/organizations?page=${page}`)).status, 200);
    const metrics = (await fetchOnce(`${origin}/metrics`)).body;
    const counted = metrics
      .split('\n')
      .filter((line) => line.startsWith('hsds_http_requests_total{') && line.includes('route="/api/hsds/v3/organizations"'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    assert.equal(counted, 10, 'the requests of every worker, counted once');
    assert.match(metrics, /^hsds_dataset_organizations 4$/m, 'the dataset is told once, not summed over the workers');

    const organizations = `${readFileSync(join(NATIVE_EXAMPLE, 'organizations.csv'), 'utf8')}NEW-1,A New Organization,published,,,,,,,,,,\n`;
    await backend.publish(nativeSourceDir(join(scratch, 'source'), { 'organizations.csv': organizations }));
    const allServeTheNewDataset = async () => {
      const versions = await Promise.all(Array.from({ length: 4 * WORKERS }, versionOf));
      return versions.every((version) => version !== before);
    };
    await waitFor(allServeTheNewDataset, 10_000, 'every worker to serve the new dataset');

    primary.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(output, /\nStopped\.\n$/, 'one line, from the primary');
    assert.deepEqual(pids.filter(isAlive), [], 'no worker is left');
  } finally {
    primary.kill('SIGKILL');
    for (const pid of pids.filter(isAlive)) process.kill(pid, 'SIGKILL');
  }
}

const STORY = 'serves one port from several processes, follows a publish in each, sums their metrics, and drains them all on SIGTERM';

describe('serve --workers on SQLite', () => {
  it(STORY, async () => {
    const data = temporaryDirectory();
    const scratch = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
      await servesWithWorkers(
        {
          args: ['--data-dir', data.path],
          env: {},
          publish: async (source) => {
            const run = await runCommand('import', data.path, [source]);
            assert.equal(run.code, 0, run.text);
          },
        },
        scratch.path,
      );
    } finally {
      data.remove();
      scratch.remove();
    }
  });
});

describe('serve --workers on PostgreSQL', postgresSuite, () => {
  it(STORY, async () => {
    const database = await temporaryDatabase();
    const scratch = temporaryDirectory();
    const importer = (source: string) =>
      spawnSync(process.execPath, [BIN, 'import', '--database-url', database.url, '--migrate', source], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none' } });
    try {
      const first = importer(NATIVE_EXAMPLE);
      assert.equal(first.status, 0, first.stderr);
      await servesWithWorkers(
        {
          args: [],
          env: { DATABASE_URL: database.url },
          publish: async (source) => {
            const run = importer(source);
            assert.equal(run.status, 0, run.stderr);
          },
        },
        scratch.path,
      );
    } finally {
      scratch.remove();
      await database.drop();
    }
  });
});
