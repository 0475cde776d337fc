/**
 * Fairness benchmark (`npm run bench:fairness`): does any request starve another? The server as in
 * production (`serve`, response cache on) on loopback; every load and probe is a process of its own.
 * Prints the figures with ok/MISSED per target and writes bench/results/fairness-<time>.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get } from 'node:http';
import { parseArgs } from 'node:util';
import { NODE_FLAGS } from '../bin/node-flags.js';
import type { ProbeReport, ProbeTiming } from './lib/fairness-probe.ts';
import { collectSamples } from './lib/http-scenarios.ts';
import { fetchRaw } from './lib/load.ts';
import type { MixedLoadResult } from './lib/mixed-load.ts';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, parseInteger, REPO, runMain, writeResults } from './lib/run.ts';
import { API, servedBundled, startServer } from './lib/served.ts';

const USAGE = `Usage: node bench/fairness.ts [options]

Two phases, each on a fresh server:
  exports      the whole list exported alone 5 times (organizations per second of the fastest,
               and per second of the server's CPU); then --exports clients loop the whole list as
               NDJSON without compression (what plain curl asks for; wrk), while a probe asks for
               /healthz and the cached first page, each every 100 ms, one at a time: p99 of each
               <= 50 ms (the same probe runs 10 s against the idle server first, for comparison:
               what the machine gives)
  connections  the mixed load of bench:faults at --connections (autocannon, after a 10 s ramp), while
               a probe opens a new connection every 100 ms: every one answered within 10 s; their
               p99 time to the first byte, and the server's accept queue (ss) sampled every 100 ms

Options:
  --data-dir DIR     a published data directory to serve (default: the bundled dataset in data/,
                     published once into bench/.cache/)
  --seconds S        how long each phase is measured (default 30)
  --exports N        looping export clients (default 4)
  --connections N    connections of the mixed load (default 256)
  --only LIST        comma-separated phases to run
  --help             print this help`;

const PHASES = ['exports', 'connections'] as const;
type Phase = (typeof PHASES)[number];
const PORT = 20_000 + (process.pid % 1000);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const EXPORT_PATH = `${API}/organizations?format=ndjson`;
const CACHED_PAGE = `${API}/organizations`;
/** What browsers and CDNs send. */
const LOAD_ENCODING = 'br, gzip';
const P99_TARGET_MS = 50;
const RAMP_SECONDS = 10;
/** Exports run alone, one after another, for the export's speed. */
const EXPORT_RUNS = 5;
/** How long the probe runs against the idle server first, for comparison. */
const IDLE_PROBE_SECONDS = 10;
const PROBE = join(REPO, 'bench', 'lib', 'fairness-probe.ts');
const MIXED_LOAD = join(REPO, 'bench', 'lib', 'mixed-load-process.ts');

interface Target {
  name: string;
  value: string;
  target: string;
  met: boolean;
}

/** Runs a process to its end and returns its stdout. */
function output(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`${command} ${args.join(' ')}: exit ${code}`))));
  });
}

const probe = async (mode: 'kept' | 'new', seconds: number, paths: string[]): Promise<ProbeReport> =>
  JSON.parse(await output(process.execPath, [...NODE_FLAGS, PROBE, mode, ORIGIN, String(seconds), ...paths]));

/** Percentile of answered times, an unanswered request counting as slower than any. */
function percentile(timings: ProbeTiming[], p: number): number {
  const times = timings.map((timing) => (timing.status === undefined ? Infinity : timing.firstByteMs!)).sort((a, b) => a - b);
  return times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)] ?? Infinity;
}

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'unanswered');

/** CPU seconds (user and system) a process has used (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One export alone, read as fast as loopback allows: its time, and the server's CPU time for it. */
function exportOnce(serverPid: number): Promise<{ organizations: number; bytes: number; seconds: number; cpuSeconds: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const cpuBefore = cpuSeconds(serverPid);
    get(`${ORIGIN}${EXPORT_PATH}`, (response) => {
      let organizations = 0;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) organizations++;
      });
      response.on('end', () => resolve({ organizations, bytes, seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSeconds(serverPid) - cpuBefore }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/**
 * Exports alone, one after another: organizations per second of the fastest, and per second of the
 * server's CPU (which other processes on the machine change less than the wall-clock time).
 */
async function exportAlone(serverPid: number) {
  const runs = [];
  for (let run = 0; run < EXPORT_RUNS; run++) runs.push(await exportOnce(serverPid));
  const fastest = runs.reduce((best, run) => (run.seconds < best.seconds ? run : best));
  const leastCpu = runs.reduce((best, run) => (run.cpuSeconds < best.cpuSeconds ? run : best));
  return { runs, organizations: fastest.organizations, bytes: fastest.bytes, seconds: fastest.seconds, perSecond: fastest.organizations / fastest.seconds, cpuSeconds: leastCpu.cpuSeconds, perCpuSecond: leastCpu.organizations / leastCpu.cpuSeconds };
}

/** wrk's summary: requests finished, and those that were not 2xx or 3xx or failed on the socket. */
function wrkSummary(text: string): { requests: number; failed: number } {
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return { requests, failed: non2xx + (socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0)) };
}

async function exportsPhase(dataDir: string, seconds: number, exports: number) {
  const server = await startServer({ dataDir }, PORT);
  try {
    const alone = await exportAlone(server.pid);
    log(`  one export alone (fastest of ${EXPORT_RUNS}): ${alone.organizations.toLocaleString('en-US')} organizations, ${(alone.bytes / MIB).toFixed(0)} MiB in ${alone.seconds.toFixed(2)} s = ${Math.round(alone.perSecond).toLocaleString('en-US')} organizations/s; least server CPU ${alone.cpuSeconds.toFixed(2)} s = ${Math.round(alone.perCpuSecond).toLocaleString('en-US')} organizations per CPU second`);
    // Into the response cache, as it is in production after its first request.
    await fetchRaw(`${ORIGIN}${CACHED_PAGE}`, { 'accept-encoding': LOAD_ENCODING });
    // The same probe with nothing else to do: what the machine gives (other processes share it).
    const idle = await probe('kept', IDLE_PROBE_SECONDS, ['/healthz', CACHED_PAGE]);
    // wrk sends no Accept-Encoding: identity bodies, as plain curl gets.
    const wrk = output('wrk', ['-t1', `-c${exports}`, `-d${seconds + 3}s`, '--timeout', '120s', `${ORIGIN}${EXPORT_PATH}`]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const eventLoop = sampleEventLoop();
    const report = await probe('kept', seconds, ['/healthz', CACHED_PAGE]);
    const eventLoopDelay = eventLoop.stop();
    const looped = wrkSummary(await wrk);
    const health = report.paths['/healthz']!;
    const page = report.paths[CACHED_PAGE]!;
    const figures = {
      idle: {
        healthz: { probes: idle.paths['/healthz']!.length, p50: percentile(idle.paths['/healthz']!, 50), p99: percentile(idle.paths['/healthz']!, 99) },
        cachedPage: { probes: idle.paths[CACHED_PAGE]!.length, p50: percentile(idle.paths[CACHED_PAGE]!, 50), p99: percentile(idle.paths[CACHED_PAGE]!, 99) },
      },
      exportAlone: alone,
      eventLoopDelay,
      loopingExports: { clients: exports, ...looped },
      healthz: { probes: health.length, unanswered: health.filter((t) => t.status === undefined).length, p50: percentile(health, 50), p99: percentile(health, 99), max: percentile(health, 100) },
      cachedPage: { probes: page.length, unanswered: page.filter((t) => t.status === undefined).length, p50: percentile(page, 50), p99: percentile(page, 99), max: percentile(page, 100) },
    };
    const targets: Target[] = [
      { name: `/healthz p99 during ${exports} looping identity exports`, value: ms(figures.healthz.p99), target: `<= ${P99_TARGET_MS} ms`, met: figures.healthz.p99 <= P99_TARGET_MS },
      { name: `cached page p99 during ${exports} looping identity exports`, value: ms(figures.cachedPage.p99), target: `<= ${P99_TARGET_MS} ms`, met: figures.cachedPage.p99 <= P99_TARGET_MS },
    ];
    log(`  idle server, for comparison: /healthz p99 ${ms(figures.idle.healthz.p99)}, cached page p99 ${ms(figures.idle.cachedPage.p99)}`);
    log(`  event-loop delay: largest mean of a second ${eventLoopDelay.meanMsMax.toFixed(1)} ms, max ${eventLoopDelay.maxMs.toFixed(0)} ms`);
    log(`  ${looped.requests} exports finished (${looped.failed} failed); /healthz ${health.length} probes, p50 ${ms(figures.healthz.p50)}, max ${ms(figures.healthz.max)}; cached page ${page.length} probes, p50 ${ms(figures.cachedPage.p50)}, max ${ms(figures.cachedPage.max)}`);
    return { figures, targets };
  } finally {
    await server.stop();
  }
}

/**
 * The server's event-loop delay each second, from its /metrics (prom-client resets it on each read):
 * the mean is what load shedding compares with its threshold (less the 10 ms resolution).
 */
function sampleEventLoop(): { stop: () => { meanMsMax: number; maxMs: number; seconds: number } } {
  const means: number[] = [];
  const maxes: number[] = [];
  const timer = setInterval(() => {
    void fetchRaw(`${ORIGIN}/metrics`).then(
      (response) => {
        const text = response.body.toString();
        const mean = /^nodejs_eventloop_lag_mean_seconds (\S+)$/m.exec(text);
        const max = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
        if (mean !== null) means.push(Number(mean[1]) * 1000);
        if (max !== null) maxes.push(Number(max[1]) * 1000);
      },
      () => {},
    );
  }, 1000);
  return {
    stop: () => {
      clearInterval(timer);
      return { meanMsMax: Math.max(0, ...means), maxMs: Math.max(0, ...maxes), seconds: means.length };
    },
  };
}

/** The server's accept queue: connections the kernel has completed that the server has not accepted yet. */
function sampleAcceptQueue(): { samples: number[]; stop: () => void } {
  const samples: number[] = [];
  const timer = setInterval(() => {
    const ss = spawnSync('ss', ['-Hltn', `sport = :${PORT}`], { encoding: 'utf8' });
    const queued = /^\S+\s+(\d+)/.exec(ss.stdout.trim());
    if (queued !== null) samples.push(Number(queued[1]));
  }, 100);
  return { samples, stop: () => clearInterval(timer) };
}

async function connectionsPhase(dataDir: string, seconds: number, connections: number) {
  const server = await startServer({ dataDir }, PORT);
  const scratch = mkdtempSync(join(tmpdir(), 'hsds-fairness-'));
  try {
    const samples = await collectSamples(ORIGIN);
    const options = join(scratch, 'load.json');
    writeFileSync(options, JSON.stringify({ origin: ORIGIN, samples, connections, rampSeconds: RAMP_SECONDS, seconds: seconds + 2, acceptEncoding: LOAD_ENCODING }));
    const load = output(process.execPath, [...NODE_FLAGS, MIXED_LOAD, options]);
    await new Promise((resolve) => setTimeout(resolve, RAMP_SECONDS * 1000));
    const queue = sampleAcceptQueue();
    const eventLoop = sampleEventLoop();
    const report = await probe('new', seconds, [CACHED_PAGE]);
    const eventLoopDelay = eventLoop.stop();
    queue.stop();
    const loaded = JSON.parse(await load) as MixedLoadResult;
    const opened = report.paths[CACHED_PAGE]!;
    const answered = opened.filter((timing) => timing.status !== undefined);
    const connects = opened.filter((timing) => timing.connectMs !== undefined).map((timing) => timing.connectMs!).sort((a, b) => a - b);
    const figures = {
      newConnections: {
        opened: opened.length,
        answered: answered.length,
        firstByteP50: percentile(opened, 50),
        firstByteP99: percentile(opened, 99),
        firstByteMax: percentile(opened, 100),
        connectP99: connects[Math.ceil(0.99 * connects.length) - 1] ?? null,
        errors: [...new Set(opened.filter((timing) => timing.error !== undefined).map((timing) => timing.error))],
      },
      eventLoopDelay,
      acceptQueue: { samples: queue.samples.length, max: Math.max(0, ...queue.samples), mean: queue.samples.reduce((sum, n) => sum + n, 0) / Math.max(1, queue.samples.length) },
      load: { connections, requests: loaded.requests, requestsPerSecond: loaded.requestsPerSecond, p99: loaded.p99, errors: loaded.errors, rampErrors: loaded.ramp.errors, errorSamples: loaded.errorSamples.slice(0, 5), statuses: loaded.statuses },
    };
    const targets: Target[] = [
      {
        name: `new connections at 10/s during ${connections}-connection load`,
        value: `${answered.length}/${opened.length} answered, p99 first byte ${ms(figures.newConnections.firstByteP99)}`,
        target: 'all answered',
        met: answered.length === opened.length,
      },
    ];
    log(`  load: ${Math.round(loaded.requestsPerSecond)} req/s, p99 ${loaded.p99.toFixed(1)} ms, ${loaded.errors} errors (${loaded.ramp.errors} in the ramp); event-loop delay: largest mean of a second ${figures.eventLoopDelay.meanMsMax.toFixed(1)} ms, max ${figures.eventLoopDelay.maxMs.toFixed(0)} ms; accept queue max ${figures.acceptQueue.max}, mean ${figures.acceptQueue.mean.toFixed(1)}; new connections: p50 first byte ${ms(figures.newConnections.firstByteP50)}, max ${ms(figures.newConnections.firstByteMax)}`);
    return { figures, targets };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await server.stop();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      seconds: { type: 'string', default: '30' },
      exports: { type: 'string', default: '4' },
      connections: { type: 'string', default: '256' },
      only: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const phases = (values.only?.split(',').map((name) => name.trim()) ?? [...PHASES]) as Phase[];
  const unknown = phases.filter((name) => !PHASES.includes(name));
  if (unknown.length > 0) throw new Error(`no such phase: ${unknown.join(', ')}`);
  const seconds = parseInteger('seconds', values.seconds, 5, 3600);
  const exports = parseInteger('exports', values.exports, 1, 1000);
  const connections = parseInteger('connections', values.connections, 1, 10_000);
  const dataDir = values['data-dir'] ?? (await servedBundled());
  const startedAt = new Date();

  const results: Record<string, unknown> = {};
  const targets: Target[] = [];
  for (const phase of PHASES.filter((name) => phases.includes(name))) {
    log(`\n${phase} ...`);
    const result = phase === 'exports' ? await exportsPhase(dataDir, seconds, exports) : await connectionsPhase(dataDir, seconds, connections);
    results[phase] = result.figures;
    targets.push(...result.targets);
  }
  const report = { startedAt: startedAt.toISOString(), machine: machine(), git: gitRevision(), dataDir, options: { seconds, exports, connections }, phases: results, targets };
  const file = writeResults('fairness', startedAt, report);
  const rows = targets.map((target) => [target.name, target.value, target.target, target.met ? 'ok' : 'MISSED']);
  process.stdout.write(`\n${describeMachine(report.machine)}\n${formatTable(['figure', 'measured', 'target', ''], rows, new Set([0, 1, 2, 3]))}\n\nResults: ${file}\n`);
  return targets.every((target) => target.met) ? 0 : 1;
}

runMain(main);
