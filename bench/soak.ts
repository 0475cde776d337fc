/**
 * Soak benchmark (`npm run bench:soak`): the server as in production, with its default settings
 * (log level info, its log read through a pipe the way a supervisor reads it, response cache on),
 * under a mixed load from wrk (a separate process) for minutes, with its memory sampled every 10 s.
 * The target (issue 15): resident memory flat within 10% after the first minute, and under 400 MiB.
 * Prints a table and writes bench/results/soak-<time>.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { NODE_FLAGS } from '../bin/node-flags.js';
import { collectSamples, random } from './lib/http-scenarios.ts';
import type { Samples } from './lib/http-scenarios.ts';
import { fetchRaw, waitUntilUp } from './lib/load.ts';
import { mixedWorkload } from './lib/mixed-load.ts';
import { anonymousBreakdown, CACHE_DIR, describeMachine, formatTable, gitRevision, log, machine, mallocHeldFree, MIB, parseInteger, REPO, residentMemory, runMain, writeResults } from './lib/run.ts';
import { API, servedBundled, warmPageCache, withBaseline } from './lib/served.ts';

const USAGE = `Usage: node bench/soak.ts [options]

Serves a published data directory with \`node src/cli.ts serve\` and its default settings (log level
info; its log read through a pipe), loads it with wrk (a separate process) with a mix of requests,
and samples the server's memory every 10 s. Target: resident memory after the first minute at most
10% above its value at the 60th second, and under 400 MiB.

Options:
  --seconds S         length of the load (default 300)
  --connections N     concurrent connections (default 256)
  --data-dir DIR      serve this published data directory (default: the bundled dataset of data/,
                      imported once into bench/.cache/)
  --serve-arg ARG     one more argument for serve, for diagnosis (repeatable, e.g.
                      --serve-arg=--log-level --serve-arg=warn)
  --help              print this help`;

const PORT = 20_000 + (process.pid % 1000);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const SAMPLE_SECONDS = 10;
/** Memory is judged from here on: the first minute fills the caches and opens the connections. */
const SETTLED_SECOND = 60;
const GROWTH_TARGET = 0.1;
const RSS_TARGET_MIB = 400;
/** How long the server is left idle after the load before its memory is read once more. */
const IDLE_SECONDS = 10;
/** Requests drawn for wrk's list (each thread goes round it from its own starting point). */
const LISTED_REQUESTS = 100_000;
const WRK_THREADS = 2;
/** How long wrk's own ceiling is measured. */
const CEILING_SECONDS = 10;
/**
 * What clients send as Accept-Encoding, with their shares: browsers and CDNs, clients that know
 * only gzip, and scripts (curl) that ask for nothing.
 */
const ENCODINGS = [
  { value: 'br, gzip', weight: 70 },
  { value: 'gzip', weight: 15 },
  { value: '', weight: 15 },
];

interface MemorySample {
  second: number;
  rss: number;
  /** Of rss, what is not a mapped file: V8's heap, buffers, what the allocator holds. */
  anonymous: number;
  /** From the server's /metrics (prom-client): V8 heap used and reserved, and memory V8 knows of outside its heap. */
  heapUsed?: number;
  heapTotal?: number;
  external?: number;
  responseCache?: number;
  /** Requests answered since the previous sample, per second. */
  requestsPerSecond?: number;
  /** Bytes of log read from the server's stdout so far: a log falling behind the requests is kept in memory. */
  logBytes: number;
  /** CPU time of the server and of wrk since the previous sample, as a share of one core. */
  serverCpu?: number;
  generatorCpu?: number;
}

/** CPU seconds a process has used (user and system), from /proc. */
function cpuSeconds(pid: number): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const metricValue = (text: string, name: string): number | undefined => {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match === null ? undefined : Number(match[1]);
};

const requestsAnswered = (text: string): number =>
  [...text.matchAll(/^hsds_http_requests_total\{[^}]*\} (\S+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);

/**
 * The list of requests wrk goes round: the mix of bench:faults (first pages, any page, single
 * organizations, term-filtered pages, searches, pages of terms, 304s, 404s, 400s), each with an
 * Accept-Encoding drawn from ENCODINGS. Pages past the response cache's reach are asked for too, so
 * some answers come from the cache and some from the store.
 */
function writeRequestList(samples: Samples, file: string): Record<string, number> {
  const workload = mixedWorkload(samples);
  const next = random(23);
  const draw = <T extends { weight: number }>(items: readonly T[]): T => {
    let roll = next() * items.reduce((sum, item) => sum + item.weight, 0);
    for (const item of items) {
      roll -= item.weight;
      if (roll < 0) return item;
    }
    return items.at(-1)!;
  };
  const kinds: Record<string, number> = {};
  const lines: string[] = [];
  for (let index = 0; index < LISTED_REQUESTS; index++) {
    const kind = draw(workload.kinds);
    const drawn = kind.draw(next);
    const encoding = draw(ENCODINGS).value;
    // The revalidation's ETag names the coding it was made for: ask in that coding.
    const tag = drawn.headers?.['if-none-match'] ?? '';
    lines.push(`${drawn.path}\t${tag === '' ? encoding : 'br, gzip'}\t${tag}`);
    kinds[kind.kind] = (kinds[kind.kind] ?? 0) + 1;
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return kinds;
}

interface WrkResult {
  requests: number;
  microseconds: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; timeout: number };
  latencyMs: { p50: number; p99: number; max: number };
  statuses: Record<string, number>;
}

/** wrk going round the list of requests at `origin`; its result once it ends. */
function startWrk(origin: string, listFile: string, connections: number, seconds: number): { pid: number; result: Promise<WrkResult> } {
  const wrk = spawn('wrk', ['-t', String(WRK_THREADS), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', join(REPO, 'bench/lib/soak.lua'), origin, '--', listFile, String(WRK_THREADS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  wrk.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const result = new Promise<WrkResult>((resolvePromise, reject) =>
    wrk.once('exit', (code) => {
      const marker = output.split('\n').find((line) => line.startsWith('SOAK '));
      if (code !== 0 || marker === undefined) reject(new Error(`wrk failed (exit ${code}):\n${output}`));
      else resolvePromise(JSON.parse(marker.slice(5)) as WrkResult);
    }),
  );
  return { pid: wrk.pid!, result };
}

const perSecond = (load: WrkResult): number => (load.requests * 1e6) / load.microseconds;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '300' },
      connections: { type: 'string', default: '256' },
      'data-dir': { type: 'string' },
      'serve-arg': { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const seconds = parseInteger('seconds', values.seconds, SAMPLE_SECONDS, 24 * 3600);
  const connections = parseInteger('connections', values.connections, 1, 10_000);
  if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed: install it (Debian: apt-get install wrk) and run again');
  const startedAt = new Date();
  const dataDir = values['data-dir'] === undefined ? await servedBundled() : resolve(values['data-dir']);
  if (!existsSync(join(dataDir, 'current'))) throw new Error(`${dataDir} holds no published dataset: publish one with \`npm run import -- --data-dir ${dataDir} <sources>\``);
  await warmPageCache(dataDir);

  const serveArgs = ['src/cli.ts', 'serve', '--data-dir', dataDir, '--port', String(PORT), '--host', '127.0.0.1', ...values['serve-arg']];
  log(`Starting node ${[...NODE_FLAGS, ...serveArgs].join(' ')}`);
  const server = spawn(process.execPath, [...NODE_FLAGS, ...serveArgs], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  // The log is read as a supervisor (systemd, Docker) reads it: through a pipe, as fast as it comes.
  let logBytes = 0;
  server.stdout!.on('data', (chunk: Buffer) => (logBytes += chunk.length));
  const serverExited = new Promise<void>((done) => server.once('exit', () => done()));
  try {
    await waitUntilUp(`${ORIGIN}${API}/`);
    log('Drawing samples of the dataset ...');
    const samples = await collectSamples(ORIGIN);
    mkdirSync(CACHE_DIR, { recursive: true });
    const listFile = join(CACHE_DIR, `soak-requests-${process.pid}.tsv`);
    const listed = writeRequestList(samples, listFile);

    // How hard wrk can push with this script, where answering costs next to nothing: the load below
    // is the server's limit, not the generator's, while the server gets a small share of this.
    log(`Measuring wrk's own ceiling: ${CEILING_SECONDS} s against a bare node:http server ...`);
    const hotPage = await fetchRaw(`${ORIGIN}${API}/organizations`, { 'accept-encoding': 'br, gzip' });
    const ceiling = await withBaseline(hotPage, PORT + 1, (origin) => startWrk(origin, listFile, connections, CEILING_SECONDS).result);
    log(`  ${perSecond(ceiling).toFixed(0)} req/s`);

    log(`Loading the server with wrk: ${connections} connections, ${seconds} s; memory every ${SAMPLE_SECONDS} s.`);
    const wrk = startWrk(ORIGIN, listFile, connections, seconds);
    const memory: MemorySample[] = [];
    const loadStarted = performance.now();
    let previous = { at: loadStarted, requests: requestsAnswered((await fetchRaw(`${ORIGIN}/metrics`)).body.toString()), server: cpuSeconds(server.pid!), wrk: cpuSeconds(wrk.pid) };
    const sample = async (second: number, underLoad: boolean): Promise<MemorySample> => {
      const { rss, anonymous } = residentMemory(server.pid!);
      const text = (await fetchRaw(`${ORIGIN}/metrics`)).body.toString();
      const now = { at: performance.now(), requests: requestsAnswered(text), server: cpuSeconds(server.pid!), wrk: underLoad ? cpuSeconds(wrk.pid) : previous.wrk };
      const elapsed = (now.at - previous.at) / 1000;
      const result: MemorySample = {
        second,
        rss,
        anonymous,
        logBytes,
        heapUsed: metricValue(text, 'nodejs_heap_size_used_bytes'),
        heapTotal: metricValue(text, 'nodejs_heap_size_total_bytes'),
        external: metricValue(text, 'nodejs_external_memory_bytes'),
        responseCache: metricValue(text, 'hsds_response_cache_bytes'),
        requestsPerSecond: (now.requests - previous.requests) / elapsed,
        serverCpu: (now.server - previous.server) / elapsed,
        generatorCpu: underLoad ? (now.wrk - previous.wrk) / elapsed : undefined,
      };
      previous = now;
      return result;
    };
    for (let second = SAMPLE_SECONDS; second <= seconds; second += SAMPLE_SECONDS) {
      await sleep(Math.max(0, loadStarted + second * 1000 - performance.now()));
      const taken = await sample(second, true);
      memory.push(taken);
      log(`  ${String(second).padStart(4)} s  RSS ${(taken.rss / MIB).toFixed(0)} MiB, external ${((taken.external ?? 0) / MIB).toFixed(0)} MiB, log read ${(taken.logBytes / MIB).toFixed(0)} MiB, ${taken.requestsPerSecond!.toFixed(0)} req/s`);
    }
    const load = await wrk.result;
    await sleep(IDLE_SECONDS * 1000);
    const idle = await sample(seconds + IDLE_SECONDS, false);
    const breakdown = anonymousBreakdown(server.pid!);
    const heldFree = mallocHeldFree(server.pid!);

    // The check: after the first minute, resident memory stays within GROWTH_TARGET of its value then, and under the ceiling.
    const settled = memory.find((entry) => entry.second >= SETTLED_SECOND) ?? memory.at(-1)!;
    const later = memory.filter((entry) => entry.second >= settled.second);
    const maxLater = Math.max(...later.map((entry) => entry.rss));
    const growth = maxLater / settled.rss - 1;
    const maxAll = Math.max(...memory.map((entry) => entry.rss), idle.rss);
    const flat = growth <= GROWTH_TARGET;
    const under = maxAll <= RSS_TARGET_MIB * MIB;
    const errors = load.errors.connect + load.errors.read + load.errors.write + load.errors.timeout;
    const unexpected = Object.entries(load.statuses).filter(([status]) => !['200', '304', '400', '404'].includes(status));
    const serverCpu = memory.reduce((sum, entry) => sum + entry.serverCpu!, 0) / memory.length;
    const generatorCpu = memory.reduce((sum, entry) => sum + entry.generatorCpu!, 0) / memory.length;

    const mib = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / MIB).toFixed(0));
    const rows = [...memory, idle].map((entry) => [
      entry === idle ? `${entry.second} (idle)` : String(entry.second),
      mib(entry.rss),
      mib(entry.anonymous),
      mib(entry.heapUsed),
      mib(entry.heapTotal),
      mib(entry.external),
      mib(entry.responseCache),
      mib(entry.logBytes),
      entry.requestsPerSecond!.toFixed(0),
      `${(entry.serverCpu! * 100).toFixed(0)}%`,
      entry.generatorCpu === undefined ? '-' : `${(entry.generatorCpu * 100).toFixed(0)}%`,
    ]);
    const revision = gitRevision();
    const report = {
      benchmark: 'soak',
      startedAt: startedAt.toISOString(),
      machine: machine(),
      revision,
      dataDir,
      serveArgs,
      connections,
      seconds,
      listedRequests: listed,
      encodings: ENCODINGS,
      logBytes,
      load,
      generatorCeiling: ceiling,
      memory: [...memory, { ...idle, idle: true }],
      cpu: { server: serverCpu, generator: generatorCpu },
      target: { settledSecond: settled.second, settledRss: settled.rss, maxRssAfter: maxLater, growth, maxRss: maxAll, growthTarget: GROWTH_TARGET, rssTargetMiB: RSS_TARGET_MIB, met: flat && under },
      anonymousAtIdle: { ...breakdown, mallocHeldFree: heldFree },
    };
    const file = writeResults('soak', startedAt, report);
    rmSync(listFile, { force: true });

    const out = [
      `${describeMachine(report.machine)}; commit ${revision.commit?.slice(0, 10) ?? 'unknown'}${revision.dirty ? ' (dirty)' : ''}`,
      `serve ${serveArgs.slice(2).join(' ')} (log read through a pipe: ${(logBytes / MIB).toFixed(0)} MiB)`,
      `wrk: ${connections} connections, ${seconds} s: ${load.requests.toLocaleString('en-US')} requests, ${perSecond(load).toFixed(0)} req/s, p50 ${load.latencyMs.p50.toFixed(1)} ms, p99 ${load.latencyMs.p99.toFixed(1)} ms; ` +
        `statuses ${Object.entries(load.statuses).map(([status, count]) => `${status}: ${count.toLocaleString('en-US')}`).join(', ')}; ` +
        `socket errors ${errors}${unexpected.length > 0 ? `; UNEXPECTED STATUSES ${unexpected.map(([status]) => status).join(', ')}` : ''}`,
      `CPU, share of one core: server ${(serverCpu * 100).toFixed(0)}%, wrk ${(generatorCpu * 100).toFixed(0)}%; wrk's ceiling with this script (a bare node:http server answering): ${perSecond(ceiling).toFixed(0)} req/s`,
      '',
      `anonymous memory at idle: ${mib(breakdown.mainArena)} MiB in glibc's main arena, ${mib(breakdown.threadArenas)} MiB in ${breakdown.threadArenaCount} thread arenas, ${mib(breakdown.otherMappings)} MiB in other mappings (V8's heap pages among them: ${mib(idle.heapTotal)} MiB); malloc held ${heldFree === undefined ? 'an unknown part (gdb could not attach)' : `${mib(heldFree)} MiB`} of it free (what malloc_trim gave back)`,
      '',
      formatTable(['second', 'RSS MiB', 'anonymous', 'heap used', 'heap total', 'external', 'resp. cache', 'log read', 'req/s', 'server CPU', 'wrk CPU'], rows, new Set([0])),
      '',
      `RSS at ${settled.second} s ${mib(settled.rss)} MiB, largest after it ${mib(maxLater)} MiB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %, target <= +${GROWTH_TARGET * 100} %) ${flat ? 'ok' : 'MISSED'}`,
      `RSS largest ${mib(maxAll)} MiB (target < ${RSS_TARGET_MIB} MiB) ${under ? 'ok' : 'MISSED'}`,
      `results: ${file}`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } finally {
    server.kill('SIGTERM');
    await serverExited;
  }
}

runMain(main);
