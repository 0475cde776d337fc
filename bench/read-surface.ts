/**
 * Read-surface benchmark: serves a published data directory with `node src/cli.ts serve` (a child
 * process, as in production) and measures
 *   a. latency and throughput of list queries (filters, search, deep pages) with autocannon, and
 *   b. the full NDJSON export (`/organizations?format=ndjson&full=true`), read by a slow and by a
 *      fast client: time, size, and the server's resident memory before, during and after, which
 *      must stay flat (the stream holds one batch at a time, with back-pressure).
 * Results are printed and written as JSON to bench/results/read-surface-<timestamp>.json.
 *
 * Usage: node bench/read-surface.ts [--data-dir DIR] [--duration S] [--connections N]
 *   Without --data-dir, the default dataset (data/) is imported into a temporary directory first.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { NODE_FLAGS } from '../bin/node-flags.js';

const REPO = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const PORT = 18_000 + (process.pid % 1000);
const BASE = `http://127.0.0.1:${PORT}/api/hsds/v3`;

const QUERIES = [
  '/organizations',
  '/organizations?page=16000&per_page=20',
  '/organizations?full=true&per_page=100',
  '/organizations?taxonomy_term_id=ntee:X20',
  '/organizations?taxonomy_id=oe_services&page=2000',
  '/organizations?search=food%20bank',
  '/organizations?search=church',
  '/organizations?search=church&page=1000',
  '/organizations?search=inc',
  '/organizations?search=church&taxonomy_id=ntee',
  '/organizations?modified_after=2000-01-01',
  '/organizations/69997cec-765e-500c-ab68-5ebd852bc8da',
  '/taxonomy_terms?taxonomy_id=ntee&top_only=true',
  '/taxonomy_terms?search=food',
];

function residentMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

async function waitUntilUp(): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const up = await new Promise<boolean>((done) => {
      get(`${BASE}/`, (response) => {
        response.resume();
        done(response.statusCode === 200);
      }).on('error', () => done(false));
    });
    if (up) return;
    await sleep(100);
  }
  throw new Error('the server did not come up');
}

/** Streams the NDJSON export; `pauseMs` after each chunk makes a slow client. Samples server memory. */
async function exportAll(pid: number, pauseMs: number) {
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(residentMemory(pid).rss), 50);
  const start = performance.now();
  const { bytes, lines } = await new Promise<{ bytes: number; lines: number }>((done, fail) => {
    get(`${BASE}/organizations?format=ndjson&full=true`, (response) => {
      let bytes = 0;
      let lines = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let index = chunk.indexOf(10); index >= 0; index = chunk.indexOf(10, index + 1)) lines++;
        if (pauseMs > 0) {
          response.pause();
          setTimeout(() => response.resume(), pauseMs);
        }
      });
      response.on('end', () => done({ bytes, lines }));
      response.on('error', fail);
    }).on('error', fail);
  });
  clearInterval(sampler);
  const seconds = (performance.now() - start) / 1000;
  return { lines, bytes, seconds, rssMin: Math.min(...samples), rssMax: Math.max(...samples) };
}

let temporary: string | undefined;
let dataDir = values['data-dir'];
if (dataDir === undefined) {
  temporary = mkdtempSync(join(tmpdir(), 'hsds-bench-read-'));
  dataDir = join(temporary, 'data');
  console.log('importing the default dataset…');
  const imported = spawnSync(process.execPath, [...NODE_FLAGS, 'src/cli.ts', 'import', '--data-dir', dataDir, '--progress', 'none', 'data'], {
    cwd: REPO,
    stdio: 'inherit',
  });
  if (imported.status !== 0) process.exit(1);
}

const server = spawn(process.execPath, [...NODE_FLAGS, 'src/cli.ts', 'serve', '--data-dir', dataDir, '--port', String(PORT), '--log-level', 'warn'], {
  cwd: REPO,
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  await waitUntilUp();
  const latency = [];
  console.log(`\n${connections} connections, ${duration} s per query`);
  console.log('query'.padEnd(52), 'req/s'.padStart(8), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'errors'.padStart(7));
  for (const query of QUERIES) {
    const result = await autocannon({ url: `${BASE}${query}`, connections, duration });
    const row = { query, requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
    latency.push(row);
    console.log(query.padEnd(52), row.requestsPerSecond.toFixed(0).padStart(8), String(row.p50).padStart(8), String(row.p99).padStart(8), String(row.non2xx).padStart(7));
  }

  const before = residentMemory(server.pid!);
  const fast = await exportAll(server.pid!, 0);
  const slow = await exportAll(server.pid!, 2);
  const after = residentMemory(server.pid!);
  console.log('\nNDJSON export, /organizations?format=ndjson&full=true');
  for (const [name, run] of [['fast client', fast], ['slow client (2 ms pause per chunk)', slow]] as const) {
    console.log(
      `  ${name}: ${run.lines.toLocaleString('en-US')} lines, ${mib(run.bytes)} MiB in ${run.seconds.toFixed(1)} s; server RSS ${mib(run.rssMin)}–${mib(run.rssMax)} MiB`,
    );
  }
  console.log(`  server RSS before ${mib(before.rss)} MiB, after ${mib(after.rss)} MiB, peak ${mib(after.peak)} MiB`);

  const results = {
    when: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memory: totalmem(), node: process.version },
    connections,
    duration,
    latency,
    ndjson: { fast, slow, rssBefore: before.rss, rssAfter: after.rss, peak: after.peak },
  };
  mkdirSync(join(REPO, 'bench/results'), { recursive: true });
  const file = join(REPO, `bench/results/read-surface-${results.when.replace(/:/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nResults: ${file}`);
} finally {
  server.kill();
  if (temporary !== undefined) rmSync(temporary, { recursive: true, force: true });
}
