/**
 * Load and fault benchmark (`npm run bench:faults`): the server as in production (`serve`, response
 * cache on) on loopback, under a mixed load of many connections, through four phases, each bounded
 * in time and stopping by itself. Prints a table and writes bench/results/faults-<time>.json.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { NODE_FLAGS } from '../bin/node-flags.js';
import { collectSamples } from './lib/http-scenarios.ts';
import type { Samples } from './lib/http-scenarios.ts';
import { fetchJson, fetchRaw } from './lib/load.ts';
import { mixedWorkload, startMixedLoad } from './lib/mixed-load.ts';
import type { Answer, MixedLoadResult } from './lib/mixed-load.ts';
import { differences, referenceResponses, sampleMemory, sinceMs, watchEventLoop } from './lib/observe.ts';
import { leftovers, quickCheck, workingCopy } from './lib/fault-store.ts';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, parseInteger, REPO, runMain, writeResults } from './lib/run.ts';
import { API, servedArgs, startServer, syntheticSources, warmPageCache, warmPostgres } from './lib/served.ts';
import type { Served, Server } from './lib/served.ts';
import { syntheticDataset } from './lib/synthetic.ts';

const USAGE = `Usage: node bench/faults.ts [options]

Every load runs 10 s before it is measured or a fault is made (the ramp: its errors are reported
apart). Phases (all by default, in this order):
  load         the full mix at --connections for --seconds: no errors, the p99, and the server's
               resident memory at the 10th and the last second (growth at most 10 %)
  publish      the stable mix while a second edition of the dataset (every name suffixed) is
               published: no errors, no response mixing editions, none of the old edition once the
               new one is served
  kill-server  kill -9 of the server under load, and a restart at once: no errors once it is ready,
               the same dataset byte for byte
  kill-import  kill -9 of an import at three points (reading; halfway through writing or loading;
               after writing or loading), under load: the live dataset is served throughout, the same
               byte for byte; then a whole import succeeds

Options:
  --organizations N   size of the synthetic dataset (default 2000000), generated and published once
                      into bench/.cache/, then copied for the run
  --seed S            seed of the synthetic dataset (default 1)
  --store KIND        sqlite (default) or postgres
  --database-url URL  PostgreSQL server for --store postgres (default
                      postgres://postgres@127.0.0.1:5432/postgres)
  --connections N     concurrent connections (default 256)
  --seconds S         length of the load phase (default 60)
  --only LIST         comma-separated phases to run
  --help              print this help`;

const PHASES = ['load', 'publish', 'kill-server', 'kill-import'] as const;
type Phase = (typeof PHASES)[number];
const PORT = 19_000 + (process.pid % 1000);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const SECOND_EDITION = ' (second edition)';
/** How long after an import's end a server may take to serve it (it verifies the snapshot's checksum first). */
const SWITCH_LIMIT_MS = 120_000;
/** What browsers and CDNs send. */
const LOAD_ENCODING = 'br, gzip';
const RSS_GROWTH_TARGET = 0.1;
/** How long each load runs before it is measured, or a fault is made. */
const RAMP_SECONDS = 10;
/** An event-loop delay worth listing (ms). */
const STALL_MS = 500;
/** Kinds of request whose bodies name organizations, and so show their edition. */
const ORGANIZATION_KINDS = new Set(['first page', 'any page', 'organization', 'term page', 'search']);

interface Context {
  served: Served;
  editions: { first: string[]; second: string[] };
  samples: Samples;
  connections: number;
  seconds: number;
}

/** A phase's outcome; `errors` are those that count (for kill-server, those after the restart). */
type PhaseReport = { phase: Phase; met: boolean; summary: string; errors: number; load?: MixedLoadResult } & Record<string, unknown>;

/** Where an import is killed: once its progress in `stage` reaches `rows`, after `delayMs`. */
interface KillPoint {
  name: string;
  stage: string;
  rows: number;
  delayMs: (rows: number, stageSeconds: number) => number;
}

const live = async (): Promise<{ version: string; organizations: number }> => (await fetchJson(`${ORIGIN}${API}/`)).dataset;

/** Which edition a list or an organization is of; undefined for a body that names none. */
function editionOf(body: any): 'first' | 'second' | 'mixed' | undefined {
  const names: string[] = Array.isArray(body.contents) ? body.contents.map((item: { name: string }) => item.name) : [body.name];
  const seconds = names.filter((name) => name.endsWith(SECOND_EDITION)).length;
  if (names.length === 0) return undefined;
  return seconds === 0 ? 'first' : seconds === names.length ? 'second' : 'mixed';
}

/** The samples, with the ETag the server gives the first page now (for the conditional requests). */
async function currentSamples(context: Context): Promise<Samples> {
  const response = await fetchRaw(`${ORIGIN}${API}/organizations`, { 'accept-encoding': LOAD_ENCODING });
  return { ...context.samples, etag: response.headers.etag! };
}

async function loadPhase(context: Context): Promise<PhaseReport> {
  const server = await startServer(context.served, PORT);
  try {
    const running = startMixedLoad({ origin: ORIGIN, workload: mixedWorkload(await currentSamples(context)), connections: context.connections, rampSeconds: RAMP_SECONDS, seconds: RAMP_SECONDS + context.seconds, acceptEncoding: LOAD_ENCODING });
    await running.ramped;
    const memory = sampleMemory(server.pid);
    const load = await running.done;
    memory.stop();
    const at = (second: number) => memory.samples.reduce((best, sample) => (Math.abs(sample.second - second) < Math.abs(best.second - second) ? sample : best));
    const tenth = at(10);
    const last = at(context.seconds);
    const growth = last.rss / tenth.rss - 1;
    const met = load.errors === 0 && growth <= RSS_GROWTH_TARGET;
    const summary = `${Math.round(load.requestsPerSecond)} req/s, p99 ${load.p99.toFixed(1)} ms, ${load.errors} errors; RSS ${(tenth.rss / MIB).toFixed(0)} MiB at ${tenth.second} s, ${(last.rss / MIB).toFixed(0)} MiB at ${last.second} s (${(growth * 100).toFixed(1)} %)`;
    return { phase: 'load', met, summary, errors: load.errors, load, rssMiB: memory.samples.map((sample) => [sample.second, sample.rss / MIB]), rssGrowth: growth };
  } finally {
    await server.stop();
  }
}

/** `import` of a synthetic edition into the served store, with its progress lines. */
function startImport(context: Context, sources: string[], onLine: (line: string) => void = () => {}) {
  const child = spawn(process.execPath, [...NODE_FLAGS, 'src/cli.ts', 'import', ...servedArgs(context.served), '--progress', 'lines', ...sources], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
  const started = performance.now();
  let pending = '';
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-4000);
    pending += chunk;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
      onLine(pending.slice(0, end));
      pending = pending.slice(end + 1);
    }
  });
  const exited = new Promise<{ code: number | null; signal: string | null; seconds: number; output: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, seconds: sinceMs(started) / 1000, output })),
  );
  return { child, exited };
}

/** The edition not live now. */
async function otherEdition(context: Context): Promise<{ name: 'first' | 'second'; sources: string[] }> {
  const first = await fetchJson(`${ORIGIN}${API}/organizations?per_page=1`);
  return editionOf(first) === 'second' ? { name: 'first', sources: context.editions.first } : { name: 'second', sources: context.editions.second };
}

async function publishPhase(context: Context): Promise<PhaseReport> {
  const server = await startServer(context.served, PORT);
  try {
    const before = await live();
    const target = await otherEdition(context);
    const etagEditions = new Map<string, string>();
    const answers = { first: 0, second: 0 };
    let switchedAt: number | undefined;
    const check = (answer: Answer): string | undefined => {
      if (answer.status !== 200 || !ORGANIZATION_KINDS.has(answer.kind)) return undefined;
      const edition = editionOf(JSON.parse(answer.body));
      if (edition === undefined) return undefined;
      if (edition === 'mixed') return 'one response of both editions';
      answers[edition]++;
      const etag = answer.headers.etag ?? '';
      if ((etagEditions.get(etag) ?? edition) !== edition) return `ETag ${etag} on both editions`;
      etagEditions.set(etag, edition);
      if (switchedAt !== undefined && answer.sentAt > switchedAt && edition !== target.name) return 'the old edition, sent after the new one was served';
      return undefined;
    };
    const load = startMixedLoad({ origin: ORIGIN, workload: mixedWorkload(context.samples, true), connections: context.connections, rampSeconds: RAMP_SECONDS, acceptEncoding: '', check });
    await load.ramped;
    const imported = startImport(context, target.sources);
    let ended = false;
    void imported.exited.then(() => (ended = true));
    let now = before;
    // Until the new version is served (the server verifies the new snapshot's checksum first), or the
    // import has failed, or the server has not switched within SWITCH_LIMIT_MS of the import's end.
    let endedAt: number | undefined;
    while (now.version === before.version) {
      if (ended) endedAt ??= performance.now();
      const failed = ended && (await imported.exited).code !== 0;
      if (failed || (endedAt !== undefined && performance.now() - endedAt > SWITCH_LIMIT_MS)) break;
      await sleep(50);
      now = await live();
    }
    switchedAt = performance.now();
    const result = await imported.exited;
    const switchSeconds = now.version === before.version ? undefined : (switchedAt - (endedAt ?? switchedAt)) / 1000;
    if (switchSeconds !== undefined) log(`  served ${switchSeconds.toFixed(1)} s after the import ended (the server verifies the new snapshot first)`);
    if (result.code !== 0) log(`  the import failed (exit ${result.code ?? result.signal}): ${result.output.trim().split('\n').slice(-3).join(' | ')}`);
    await sleep(5000);
    load.stop();
    const loadResult = await load.done;
    const met = result.code === 0 && now.version !== before.version && loadResult.errors === 0 && answers.first > 0 && answers.second > 0;
    const served = switchSeconds === undefined ? 'NOT served' : `served ${switchSeconds.toFixed(1)} s after`;
    const summary = `published in ${result.seconds.toFixed(0)} s under load, ${served}; ${answers.first + answers.second} answers checked (${answers.first} old, ${answers.second} new), ${etagEditions.size} ETags, ${loadResult.errors} errors`;
    return { phase: 'publish', met, summary, errors: loadResult.errors, load: loadResult, importSeconds: result.seconds, switchSeconds, answers, versions: [before.version, now.version] };
  } finally {
    await server.stop();
  }
}

async function killServerPhase(context: Context): Promise<PhaseReport> {
  let server: Server = await startServer(context.served, PORT);
  const before = await live();
  const reference = await referenceResponses(ORIGIN, mixedWorkload(context.samples, true));
  const load = startMixedLoad({ origin: ORIGIN, workload: mixedWorkload(await currentSamples(context)), connections: context.connections, rampSeconds: RAMP_SECONDS, acceptEncoding: LOAD_ENCODING });
  await load.ramped;
  const killedAt = performance.now();
  await server.kill();
  server = await startServer(context.served, PORT);
  const readyAt = performance.now();
  await sleep(10_000);
  load.stop();
  const loadResult = await load.done;
  try {
    const after = await live();
    const changed = await differences(ORIGIN, reference);
    const afterRestart = load.errorsSince(readyAt);
    const errorsAfterRestart = afterRestart.count;
    if (errorsAfterRestart > 0) log(`  after the restart: ${afterRestart.first.map((error) => `+${(error.at - readyAt).toFixed(0)} ms ${error.what}`).join(' | ')}`);
    const integrity = quickCheck(context.served);
    const met = after.version === before.version && changed.length === 0 && errorsAfterRestart === 0 && (integrity === null || integrity === 'ok');
    const restartMs = readyAt - killedAt;
    const summary = `answering again ${(restartMs / 1000).toFixed(1)} s after kill -9; same version ${after.version === before.version ? 'yes' : 'NO'}, ${reference.size - changed.length}/${reference.size} responses identical; ${errorsAfterRestart} errors after the restart${integrity === null ? '' : `; quick_check ${integrity}`}`;
    return { phase: 'kill-server', met, summary, errors: errorsAfterRestart, load: loadResult, restartMs, changed, errorsAfterRestart, integrity };
  } finally {
    await server.stop();
  }
}

async function killImportPhase(context: Context): Promise<PhaseReport> {
  const server = await startServer(context.served, PORT);
  try {
    const before = await live();
    const reference = await referenceResponses(ORIGIN, mixedWorkload(context.samples, true));
    const target = await otherEdition(context);
    const lastStage = 'dataDir' in context.served ? 'rendering and writing' : 'loading into PostgreSQL';
    const lastTotal = 'dataDir' in context.served ? before.organizations : before.organizations * 3;
    // Progress lines come every 2 s: "<stage>: <rows> rows, <rate> rows/s, <seconds> s".
    const points: KillPoint[] = [
      { name: 'reading', stage: 'reading sources', rows: 0, delayMs: () => 0 },
      { name: `${lastStage}, halfway`, stage: lastStage, rows: lastTotal / 2, delayMs: () => 0 },
      {
        // The stage's end, from its pace so far, and 3 s more: into what follows it (indexes, switch).
        name: `after ${lastStage}`,
        stage: lastStage,
        rows: lastTotal / 2,
        delayMs: (rows, seconds) => (seconds * (lastTotal / rows - 1) + 3) * 1000,
      },
    ];
    const load = startMixedLoad({ origin: ORIGIN, workload: mixedWorkload(await currentSamples(context)), connections: context.connections, rampSeconds: RAMP_SECONDS, acceptEncoding: LOAD_ENCODING });
    await load.ramped;
    const kills: Record<string, unknown>[] = [];
    let intact = true;
    for (const point of points) {
      let due: NodeJS.Timeout | undefined;
      const imported = startImport(context, target.sources, (line) => {
        const progress = /^(.+): ([\d,]+) rows, [\d,]+ rows\/s, ([\d.]+) s$/.exec(line);
        if (due !== undefined || progress?.[1] !== point.stage) return;
        const rows = Number(progress[2]!.replaceAll(',', ''));
        if (rows >= point.rows) due = setTimeout(() => imported.child.kill('SIGKILL'), Math.max(0, point.delayMs(rows, Number(progress[3]))));
      });
      const result = await imported.exited;
      clearTimeout(due);
      const now = await live();
      const changed = await differences(ORIGIN, reference);
      const left = await leftovers(context.served);
      const killed = result.signal === 'SIGKILL';
      const ok = killed && now.version === before.version && changed.length === 0;
      intact &&= ok;
      kills.push({ point: point.name, killedAfterSeconds: result.seconds, killed, version: now.version, changed: changed.length, leftovers: left, ok });
      const outcome = !killed ? `NOT KILLED: the import ended first (exit ${result.code}); a larger --organizations gives it time` : ok ? 'live dataset intact' : 'NOT INTACT';
      log(`  killed at ${point.name} after ${result.seconds.toFixed(1)} s: ${outcome}; left: ${left.join(', ') || 'nothing'}`);
      if (!killed) break;
    }
    const whole = await startImport(context, target.sources).exited;
    let after = await live();
    // The server verifies the new snapshot's checksum before it serves it.
    for (const endedAt = performance.now(); after.version === before.version && performance.now() - endedAt < SWITCH_LIMIT_MS; ) {
      await sleep(50);
      after = await live();
    }
    const leftAfter = await leftovers(context.served);
    load.stop();
    const loadResult = await load.done;
    const integrity = quickCheck(context.served);
    const met = intact && whole.code === 0 && after.version !== before.version && leftAfter.length === 0 && loadResult.errors === 0 && (integrity === null || integrity === 'ok');
    const summary = `${kills.filter((kill) => kill.ok).length}/${kills.length} kills left the live dataset intact; then a whole import ${whole.code === 0 ? 'succeeded' : 'FAILED'} in ${whole.seconds.toFixed(0)} s, leaving ${leftAfter.length === 0 ? 'nothing' : leftAfter.join(', ')}; ${loadResult.errors} errors${integrity === null ? '' : `; quick_check ${integrity}`}`;
    return { phase: 'kill-import', met, summary, errors: loadResult.errors, load: loadResult, kills, wholeImportSeconds: whole.seconds, leftoversAfter: leftAfter, integrity };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      organizations: { type: 'string', default: '2000000' },
      seed: { type: 'string', default: '1' },
      store: { type: 'string', default: 'sqlite' },
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      connections: { type: 'string', default: '256' },
      seconds: { type: 'string', default: '60' },
      only: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.store !== 'sqlite' && values.store !== 'postgres') throw new Error('--store must be sqlite or postgres');
  const phases = (values.only?.split(',').map((name) => name.trim()) ?? [...PHASES]) as Phase[];
  const unknown = phases.filter((name) => !PHASES.includes(name));
  if (unknown.length > 0) throw new Error(`no such phase: ${unknown.join(', ')}`);
  const organizations = parseInteger('organizations', values.organizations, 1, 999_999_999);
  const seed = parseInteger('seed', values.seed, 0, 0xffffffff);
  const startedAt = new Date();

  const served = await workingCopy(values.store, values['database-url'], organizations, seed);
  const editions = {
    first: syntheticSources((await syntheticDataset(organizations, seed)).directory),
    second: syntheticSources((await syntheticDataset(organizations, seed, SECOND_EDITION)).directory),
  };
  if ('dataDir' in served) await warmPageCache(served.dataDir);
  else await warmPostgres(served.databaseUrl);
  const probe = await startServer(served, PORT);
  const samples = await collectSamples(ORIGIN).finally(() => probe.stop());
  const context: Context = {
    served,
    editions,
    samples,
    connections: parseInteger('connections', values.connections, 1, 10_000),
    seconds: parseInteger('seconds', values.seconds, 15, 3600),
  };
  const run = { load: loadPhase, publish: publishPhase, 'kill-server': killServerPhase, 'kill-import': killImportPhase } satisfies Record<Phase, (context: Context) => Promise<PhaseReport>>;
  const reports: PhaseReport[] = [];
  for (const phase of PHASES.filter((name) => phases.includes(name))) {
    log(`\n${phase} ...`);
    const phaseStarted = performance.now();
    const eventLoop = watchEventLoop(ORIGIN);
    const report = await run[phase](context);
    eventLoop.stop();
    const offset = (at: number) => Math.round(at - phaseStarted) / 1000;
    report.eventLoopMaxMs = Math.max(0, ...eventLoop.samples.map((sample) => sample.maxMs));
    report.stalls = eventLoop.samples.filter((sample) => sample.maxMs >= STALL_MS).map((sample) => ({ second: offset(sample.at), maxMs: Math.round(sample.maxMs) }));
    for (const error of [...(report.load?.errorSamples ?? []), ...(report.load?.slowSamples ?? []), ...(report.load?.ramp.errorSamples ?? [])]) error.at = offset(error.at);
    log(`  ${report.met ? 'ok' : 'FAILED'}: ${report.summary}`);
    if (report.errors > 0 && report.load !== undefined) log(`  errors, e.g.: ${report.load.errorSamples.map((error) => error.what).join(' | ')}`);
    reports.push(report);
  }
  if ('dataDir' in served && existsSync(served.dataDir)) rmSync(served.dataDir, { recursive: true, force: true });

  const report = {
    startedAt: startedAt.toISOString(),
    machine: machine(),
    git: gitRevision(),
    store: values.store,
    dataset: samples.dataset,
    options: { connections: context.connections, seconds: context.seconds },
    phases: reports,
  };
  const file = writeResults('faults', startedAt, report);
  const rows = reports.map((r) => [
    r.phase,
    r.load === undefined ? '-' : `${r.load.ramp.errors}`,
    r.load === undefined ? '-' : Math.round(r.load.requests).toLocaleString('en-US'),
    r.load === undefined ? '-' : r.load.p99.toFixed(1),
    String(r.errors),
    r.met ? 'ok' : 'FAILED',
    r.summary,
  ]);
  const out = [
    `\n${describeMachine(report.machine)}`,
    `${values.store === 'postgres' ? 'PostgreSQL' : 'SQLite'}: ${samples.dataset.organizations.toLocaleString('en-US')} organizations, ${context.connections} connections\n`,
    formatTable(['phase', 'ramp errors', 'requests', 'p99 ms', 'errors', '', 'what happened'], rows, new Set([0, 5, 6])),
    `\nResults: ${file}`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return reports.every((r) => r.met) ? 0 : 1;
}

runMain(main);
