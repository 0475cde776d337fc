/**
 * Serving speed, measured honestly (issue 19): wrk (Debian's, a process of its own) loads, in
 * interleaved rounds, each server answering the same request with the same bytes:
 *
 * - bare node:http sending the recorded answer (the runtime's ceiling, bench/lib/baseline-server.ts);
 * - nginx serving the recorded body as a file (one worker; `apt-get install nginx`);
 * - minimal Fastify, one route sending the recorded answer, no logger (bench/lib/minimal-fastify.ts);
 * - this API (`serve`, default settings but the log level: warn), the same with the default log
 *   level (info: an access-log line per request, written to /dev/null), the same with --workers N (2 by
 *   default; on this 2-core machine wrk shares the cores with them), and in the `page` scenario
 *   this API with the rate limit on; with --compare, the API of another checkout too (and, with
 *   --latency-data-dir, its uncached latency beside this API's).
 *
 * Scenarios: `page` (a cached page), `304` (its revalidation: If-None-Match of its ETag). Each
 * round's requests per second and ratios to bare node:http of the same round are printed, with the
 * commit, the load average before and after, and the API's peak RSS. With --latency-data-dir, the
 * API also serves that directory with the response cache off, and wrk at one connection times an
 * uncached page and an organization by id (p50/p99), each beside bare node:http sending the same
 * answer (the latency this machine gives any server at one connection), in interleaved rounds.
 *
 *   node bench/hot-page.ts --data-dir DIR [--scenarios page,304|none] [--rounds 3] [--seconds 6]
 *        [--connections 32] [--path /api/hsds/v3/organizations?page=3] [--encoding br]
 *        [--compare ../before [--compare-data-dir DIR] [--compare-latency-data-dir DIR]] [--latency-data-dir /work/bench-2m] [--workers 2]
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import type { RecordedResponse } from './lib/recorded-response.ts';

const REPO = resolve(import.meta.dirname, '..');

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'latency-data-dir': { type: 'string' },
    compare: { type: 'string' },
    'compare-data-dir': { type: 'string' },
    'compare-latency-data-dir': { type: 'string' },
    scenarios: { type: 'string', default: 'page,304' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '32' },
    path: { type: 'string', default: '/api/hsds/v3/organizations?page=3' },
    encoding: { type: 'string', default: 'br' },
    workers: { type: 'string', default: '2' },
  },
});
if (values['data-dir'] === undefined) {
  process.stderr.write('bench/hot-page.ts needs --data-dir: a published data directory (e.g. after npm start, var/hsds)\n');
  process.exit(2);
}

/** The rate limit of the rate-limited API: high enough that wrk never meets it (its rounds stay under a minute's worth). */
const RATE_LIMIT = 1_000_000;

interface Target {
  name: string;
  port: number;
  process: ChildProcess;
}

let nextPort = 18_000 + Math.floor(Math.random() * 1000);

/** Starts a command and waits for `ready` (a line of its output matching it). */
function start(command: string, args: string[], cwd: string, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolvePromise, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolvePromise(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (error) => reject(new Error(`${command}: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`)));
  });
}

/** Serves a data directory from `checkout`; resolves once its /readyz answers 200. */
async function startApi(name: string, checkout: string, dataDir: string, extra: string[] = []): Promise<Target> {
  const port = nextPort++;
  const args = ['--max-semi-space-size=16', 'src/cli.ts', 'serve', '--data-dir', resolve(dataDir), '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn', ...extra];
  const child = spawn(process.execPath, args, { cwd: checkout, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`${name}: serve exited with ${child.exitCode}`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.status, () => 0);
    if (status === 200) return { name, port, process: child };
    await new Promise((wait) => setTimeout(wait, 100));
  }
  child.kill();
  throw new Error(`${name} was not ready within 60 s`);
}

/** The answer's status, headers and body bytes as sent (node:http leaves the body compressed). */
function record(port: number, headers: Record<string, string>, path = values.path): Promise<RecordedResponse> {
  return new Promise((resolvePromise, reject) => {
    httpRequest({ host: '127.0.0.1', port, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const recorded: Record<string, string> = {};
        for (const [key, value] of Object.entries(response.headers)) {
          // Hop-by-hop: each server's own connection handling sets these.
          if (!['connection', 'keep-alive', 'transfer-encoding', 'date'].includes(key) && value !== undefined) recorded[key] = String(value);
        }
        resolvePromise({ status: response.statusCode!, headers: recorded, body: Buffer.concat(chunks).toString('base64') });
      });
    })
      .on('error', reject)
      .end();
  });
}

/** nginx, one worker, answering every request with the recorded answer: the body as a file, the headers added. */
async function startNginx(recorded: RecordedResponse, directory: string): Promise<Target> {
  const port = nextPort++;
  writeFileSync(join(directory, 'response.body'), Buffer.from(recorded.body, 'base64'));
  const added = Object.entries(recorded.headers)
    .filter(([name]) => !['content-length', 'content-type', 'last-modified'].includes(name))
    .map(([name, value]) => `      add_header ${name} '${value.replaceAll("'", "\\'")}' always;`)
    .join('\n');
  const answer = recorded.status === 304 ? 'return 304;' : 'try_files /response.body =404;';
  writeFileSync(
    join(directory, 'nginx.conf'),
    `daemon off;
user root;
worker_processes 1;
pid ${directory}/nginx.pid;
error_log ${directory}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  etag off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port};
    root ${directory};
    location / {
      default_type '${recorded.headers['content-type'] ?? 'application/octet-stream'}';
${added}
      ${answer}
    }
  }
}
`,
  );
  const child = spawn('nginx', ['-p', directory, '-c', join(directory, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  child.once('error', (error) => process.stderr.write(`nginx: ${error.message} (apt-get install nginx)\n`));
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    const status = await fetch(`http://127.0.0.1:${port}/`).then((response) => response.status, () => 0);
    if (status !== 0) return { name: 'nginx (a file, 1 worker)', port, process: child };
    await new Promise((wait) => setTimeout(wait, 50));
  }
  throw new Error('nginx did not start');
}

/** wrk's requests per second; with `latency`, its p50 and p99 in ms too. */
function wrk(port: number, seconds: number, headers: Record<string, string>, options: { connections?: string; path?: string; latency?: boolean } = {}) {
  const args = ['-t1', `-c${options.connections ?? values.connections}`, `-d${seconds}s`, ...(options.latency ? ['--latency'] : [])];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(`http://127.0.0.1:${port}${options.path ?? values.path}`);
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<{ rate: number; p50?: number; p99?: number }>((resolvePromise, reject) => {
    child.once('error', (error) => reject(new Error(`wrk: ${error.message} (apt-get install wrk)`)));
    child.once('exit', () => {
      const match = /Requests\/sec:\s+([\d.]+)/.exec(output);
      const wanted = /Non-2xx or 3xx responses: (\d+)/.exec(output);
      if (match === null || (wanted !== null && headers['if-none-match'] === undefined)) {
        reject(new Error(`wrk: ${output}`));
        return;
      }
      const percentile = (p: string) => {
        const found = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(output);
        if (found === null) return undefined;
        return Number(found[1]) * { us: 0.001, ms: 1, s: 1000 }[found[2] as 'us' | 'ms' | 's'];
      };
      resolvePromise({ rate: Number(match[1]), p50: percentile('50'), p99: percentile('99') });
    });
  });
}

const peakRss = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO, encoding: 'utf8' }).trim() !== '';
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');

const started: Target[] = [];
try {
  console.log(`commit ${commit}${dirty ? ' (with uncommitted changes)' : ''}; Node ${process.version}; load average before: ${load()}`);
  const api = await startApi('this API', REPO, values['data-dir']!);
  started.push(api);
  // As `npm start` runs it: the log level info, one JSON access-log line per request (to /dev/null here).
  const logging = await startApi('this API, log level info (as npm start)', REPO, values['data-dir']!, ['--log-level', 'info']);
  started.push(logging);
  const rateLimited = await startApi(`this API, --rate-limit ${RATE_LIMIT}`, REPO, values['data-dir']!, ['--rate-limit', String(RATE_LIMIT)]);
  started.push(rateLimited);
  const workers = Number(values.workers);
  const clustered = workers > 1 ? await startApi(`this API, --workers ${workers}`, REPO, values['data-dir']!, ['--workers', String(workers)]) : undefined;
  if (clustered !== undefined) started.push(clustered);
  // The other checkout may read only another store format: --compare-data-dir (and --compare-latency-data-dir) is then its own copy of the same data.
  const compared = values.compare === undefined ? undefined : await startApi(`--compare ${values.compare}`, resolve(values.compare), values['compare-data-dir'] ?? values['data-dir']!);
  if (compared !== undefined) started.push(compared);

  const seconds = Number(values.seconds);
  // `--scenarios none`: only the uncached latency of --latency-data-dir.
  for (const scenario of values.scenarios === 'none' ? [] : values.scenarios!.split(',')) {
    const headers: Record<string, string> = { 'accept-encoding': values.encoding! };
    const page = await record(api.port, headers);
    if (page.status !== 200) throw new Error(`${values.path} answered ${page.status}`);
    if (scenario === '304') headers['if-none-match'] = page.headers.etag!;
    else if (scenario !== 'page') throw new Error(`unknown scenario ${scenario}: page or 304`);
    const recorded = scenario === 'page' ? page : await record(api.port, headers);
    const directory = mkdtempSync(join(tmpdir(), 'hot-page-'));
    writeFileSync(join(directory, 'response.json'), JSON.stringify(recorded));
    const servers: Target[] = [
      { name: 'bare node:http', port: nextPort, process: await start(process.execPath, ['bench/lib/baseline-server.ts', join(directory, 'response.json'), String(nextPort++)], REPO, /ready/) },
      await startNginx(recorded, directory),
      { name: 'minimal Fastify', port: nextPort, process: await start(process.execPath, ['bench/lib/minimal-fastify.ts', join(directory, 'response.json'), String(nextPort++)], REPO, /ready/) },
    ];
    started.push(...servers);
    const targets = [...servers, api, logging, ...(clustered === undefined ? [] : [clustered]), ...(scenario === 'page' ? [rateLimited] : []), ...(compared === undefined ? [] : [compared])];
    // Each API's ETag names its link origin, which has its port: each is asked with its own, and
    // every target must answer with the recorded status (a 200 counts as a success for wrk too).
    const requestHeaders = new Map<Target, Record<string, string>>();
    for (const target of targets) {
      const own = scenario === '304' && !servers.includes(target) ? { ...headers, 'if-none-match': (await record(target.port, { 'accept-encoding': values.encoding! })).headers.etag! } : headers;
      const status = (await record(target.port, own)).status;
      if (status !== recorded.status) throw new Error(`${target.name} answered ${status}, not ${recorded.status}`);
      requestHeaders.set(target, own);
    }
    // Warm-up: the response cache fills, the JIT settles.
    for (const target of targets) await wrk(target.port, 2, requestHeaders.get(target)!);
    const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
    for (let round = 0; round < Number(values.rounds); round++) {
      // Interleaved, in a different order each round.
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) rates.get(target.name)!.push((await wrk(target.port, seconds, requestHeaders.get(target)!)).rate);
    }
    for (const server of servers) server.process.kill();
    const ceiling = rates.get('bare node:http')!;
    console.log(
      `\n${scenario}: GET ${values.path} (Accept-Encoding: ${values.encoding}${scenario === '304' ? ', If-None-Match' : ''}) → ${recorded.status}, ${Buffer.from(recorded.body, 'base64').length} body bytes; wrk -t1 -c${values.connections}, ${seconds} s per run, ${values.rounds} rounds interleaved`,
    );
    console.log('| server | req/s per round | ratio to bare node:http per round | median ratio |');
    console.log('| --- | --- | --- | --- |');
    for (const [name, rounds] of rates) {
      const ratios = rounds.map((rate, index) => rate / ceiling[index]!);
      console.log(`| ${name} | ${rounds.map((rate) => Math.round(rate).toLocaleString('en-US')).join(', ')} | ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')} | ${median(ratios).toFixed(2)} |`);
    }
  }

  if (values['latency-data-dir'] !== undefined) {
    const uncached = await startApi('this API, response cache off', REPO, values['latency-data-dir'], ['--response-cache-size', '0']);
    started.push(uncached);
    const uncachedCompared =
      values.compare === undefined
        ? undefined
        : await startApi(`--compare ${values.compare}, response cache off`, resolve(values.compare), values['compare-latency-data-dir'] ?? values['latency-data-dir'], ['--response-cache-size', '0']);
    if (uncachedCompared !== undefined) started.push(uncachedCompared);
    const listing = JSON.parse(await (await fetch(`http://127.0.0.1:${uncached.port}/api/hsds/v3/organizations?per_page=1&page=1000`)).text()) as { total_items: number; contents: { id: string }[] };
    const byId = `/api/hsds/v3/organizations/${listing.contents[0]!.id}`;
    const deepPage = `/api/hsds/v3/organizations?page=${Math.floor(listing.total_items / 20 / 2)}`;
    console.log(`\nuncached, one connection (wrk -t1 -c1 --latency, ${seconds} s, ${values.rounds} rounds interleaved with bare node:http sending the same answer), ${listing.total_items.toLocaleString('en-US')} organizations (${values['latency-data-dir']}):`);
    console.log('| request | server | req/s per round | p50 ms per round | p99 ms per round | median p99 ms |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    const headers = { 'accept-encoding': values.encoding! };
    for (const path of [deepPage, byId]) {
      const directory = mkdtempSync(join(tmpdir(), 'hot-page-'));
      writeFileSync(join(directory, 'response.json'), JSON.stringify(await record(uncached.port, headers, path)));
      const bare: Target = { name: 'bare node:http', port: nextPort, process: await start(process.execPath, ['bench/lib/baseline-server.ts', join(directory, 'response.json'), String(nextPort++)], REPO, /ready/) };
      started.push(bare);
      const runs = new Map<Target, { rate: number; p50?: number; p99?: number }[]>([
        [uncached, []],
        ...(uncachedCompared === undefined ? [] : [[uncachedCompared, []] as [Target, never[]]]),
        [bare, []],
      ]);
      for (const target of runs.keys()) await wrk(target.port, 2, headers, { connections: '1', path });
      for (let round = 0; round < Number(values.rounds); round++) {
        const order = round % 2 === 0 ? [...runs.keys()] : [...runs.keys()].reverse();
        for (const target of order) runs.get(target)!.push(await wrk(target.port, seconds, headers, { connections: '1', path, latency: true }));
      }
      bare.process.kill();
      for (const [target, results] of runs) {
        const each = (pick: (result: (typeof results)[number]) => number | undefined, digits: number) => results.map((result) => pick(result)?.toFixed(digits)).join(', ');
        console.log(
          `| GET ${path} | ${target === uncached ? 'this API' : target === uncachedCompared ? `--compare ${values.compare}` : target.name} | ${each((result) => result.rate, 0)} | ${each((result) => result.p50, 3)} | ${each((result) => result.p99, 3)} | ${median(results.map((result) => result.p99 ?? Infinity)).toFixed(3)} |`,
        );
      }
    }
    console.log(`peak RSS of the uncached API: ${peakRss(uncached.process.pid!).toFixed(0)} MiB`);
  }
  console.log(`\npeak RSS of this API: ${peakRss(api.process.pid!).toFixed(0)} MiB, rate-limited: ${peakRss(rateLimited.process.pid!).toFixed(0)} MiB; load average after: ${load()}`);
} finally {
  for (const target of started) target.process.kill();
}
