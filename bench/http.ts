/**
 * HTTP benchmark (`npm run bench`): serves a published data directory with `node src/cli.ts serve`
 * (a child process, as in production) and loads it with autocannon on loopback, scenario by
 * scenario, each after a warm-up and for a fixed time. In the same run, a bare node:http server
 * (bench/lib/baseline-server.ts) answers the same load with the recorded bytes of the scenario's
 * response: the ceiling of the runtime, to which each scenario is compared.
 *
 * The hot-page and 304 scenarios run against the server as configured by default (response cache
 * on); the others against a second run of it with the response cache off, so each request is
 * answered from the store. The NDJSON export is read whole by one client. The server's resident
 * memory is sampled throughout. Prints a table and writes bench/results/http-<time>.json.
 */
import { get } from 'node:http';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { fetchRaw, load, waitUntilUp } from './lib/load.ts';
import type { LoadResult, RawResponse } from './lib/load.ts';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, parseInteger, REPO, residentMemory, runMain, writeResults } from './lib/run.ts';
import { API, servedSynthetic, servedSyntheticPostgres, startServer, warmPageCache, warmPostgres, withBaseline } from './lib/served.ts';
import type { Served } from './lib/served.ts';
import { SCENARIOS, collectSamples } from './lib/http-scenarios.ts';
import type { Samples, Scenario, ServerKind } from './lib/http-scenarios.ts';

const USAGE = `Usage: node bench/http.ts [options]

Options:
  --organizations N   size of the synthetic dataset (default 2000000), generated and imported once
                      into bench/.cache/
  --seed S            seed of the synthetic dataset (default 1)
  --data-dir DIR      serve this published data directory instead of the synthetic dataset
  --store KIND        sqlite (default) or postgres: where the synthetic dataset is published and
                      served from; postgres uses a database named after the dataset on the server
                      of --database-url
  --database-url URL  PostgreSQL server for --store postgres (default
                      postgres://postgres@127.0.0.1:5432/postgres); its database is not used
  --seconds S         measured time per scenario (default 10)
  --warmup S          warm-up time per scenario, not measured (default 2)
  --connections N     concurrent connections (default 10)
  --only LIST         comma-separated scenario names (see the table) to run
  --cold              do not read the snapshot file into the OS page cache first
  --help              print this help`;

const PORT = 18_000 + (process.pid % 1000);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASELINE_PORT = PORT + 1;
const NDJSON_TARGET = 100_000;
const RSS_TARGET_MIB = 250;

const startUnderBench = (served: Served, kind: ServerKind) =>
  startServer(served, PORT, kind === 'uncached' ? ['--response-cache-size', '0'] : []);

interface ScenarioResult extends LoadResult {
  name: string;
  description: string;
  baseline: LoadResult;
  /** The same requests one at a time: the cost of a request without waiting behind others. */
  oneConnection?: LoadResult;
  ratio: number;
  target: string;
  met: boolean;
  responseBytes: number;
  /** The server's resident memory right after the scenario, in MiB. */
  serverRssMiB?: number;
}

async function runScenario(scenario: Scenario, samples: Samples, options: { seconds: number; warmup: number; connections: number }): Promise<ScenarioResult> {
  const nextPath = scenario.paths(samples);
  const headers = scenario.headers(samples);
  const run = (origin: string, seconds: number, connections = options.connections) =>
    load({ origin, nextPath, headers, connections, seconds, expectedStatus: scenario.status });
  const recorded = await fetchRaw(`${ORIGIN}${nextPath()}`, headers);
  if (recorded.status !== scenario.status) throw new Error(`${scenario.name}: expected ${scenario.status}, got ${recorded.status}`);
  await run(ORIGIN, options.warmup);
  const measured = await run(ORIGIN, options.seconds);
  const oneConnection = scenario.target.kind === 'p99' ? await run(ORIGIN, options.seconds, 1) : undefined;
  const baseline = await withBaseline(recorded, BASELINE_PORT, async (origin) => {
    await run(origin, options.warmup);
    return run(origin, options.seconds);
  });
  const ratio = measured.requestsPerSecond / baseline.requestsPerSecond;
  const { target } = scenario;
  // A latency target is the cost of a request: with N connections on one server thread, a request
  // also waits for up to N - 1 others, so the loaded p99 (also reported) grows with N by construction.
  const met = target.kind === 'ratio' ? ratio >= target.value : oneConnection!.p99 <= target.value;
  return {
    name: scenario.name,
    description: scenario.description,
    ...measured,
    baseline,
    oneConnection,
    ratio,
    target: target.kind === 'ratio' ? `>= ${target.value} x baseline` : `p99, 1 conn. <= ${target.value} ms`,
    met: met && measured.errors === 0,
    responseBytes: recorded.body.length,
  };
}

/** Reads the whole NDJSON export as fast as one client can, counting lines. */
function exportAll(headers: Record<string, string>): Promise<{ organizations: number; bytes: number; seconds: number; perSecond: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(`${ORIGIN}${API}/organizations?format=ndjson`, { headers }, (response) => {
      let bytes = 0;
      let lines = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      });
      response.on('end', () => {
        const seconds = (performance.now() - started) / 1000;
        resolve({ organizations: lines, bytes, seconds, perSecond: lines / seconds });
      });
      response.on('error', reject);
    }).on('error', reject);
  });
}

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
const thousands = (value: number) => Math.round(value).toLocaleString('en-US');

function scenarioTable(results: ScenarioResult[]): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'p99 ms, 1 conn.', 'baseline req/s', 'ratio', 'target', ''];
  // req/s, p50 and p99 are at --connections; the ratio compares req/s with the baseline's.
  const rows = results.map((r) => [
    r.name,
    thousands(r.requestsPerSecond),
    ms(r.p50),
    ms(r.p99),
    r.oneConnection === undefined ? '-' : ms(r.oneConnection.p99),
    thousands(r.baseline.requestsPerSecond),
    r.ratio.toFixed(2),
    r.target,
    r.met ? 'ok' : r.errors > 0 ? `${r.errors} ERRORS` : 'MISSED',
  ]);
  return formatTable(header, rows, new Set([0, 7, 8]));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      organizations: { type: 'string', default: '2000000' },
      seed: { type: 'string', default: '1' },
      'data-dir': { type: 'string' },
      store: { type: 'string', default: 'sqlite' },
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      only: { type: 'string' },
      cold: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = {
    seconds: parseInteger('seconds', values.seconds, 1, 3600),
    warmup: parseInteger('warmup', values.warmup, 0, 600),
    connections: parseInteger('connections', values.connections, 1, 1000),
  };
  const only = values.only?.split(',').map((name) => name.trim());
  const unknown = only?.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name) && name !== 'ndjson');
  if (unknown !== undefined && unknown.length > 0) throw new Error(`no such scenario: ${unknown.join(', ')}`);
  const wanted = (name: string) => only === undefined || only.includes(name);

  const startedAt = new Date();
  if (values.store !== 'sqlite' && values.store !== 'postgres') throw new Error('--store must be sqlite or postgres');
  const size = parseInteger('organizations', values.organizations, 1, 999_999_999);
  const seed = parseInteger('seed', values.seed, 0, 0xffffffff);
  let served: Served;
  if (values.store === 'postgres') {
    served = { databaseUrl: await servedSyntheticPostgres(values['database-url'], size, seed) };
    if (!values.cold) await warmPostgres(served.databaseUrl);
  } else {
    served = { dataDir: values['data-dir'] ?? (await servedSynthetic(size, seed)) };
    if (!values.cold) await warmPageCache(served.dataDir);
  }
  const results: ScenarioResult[] = [];
  const memory: Record<string, { rssMaxMiB: number }> = {};
  let ndjson: (Awaited<ReturnType<typeof exportAll>> & { serverRssMiB: number }) | undefined;
  let samples: Samples | undefined;
  for (const kind of ['cached', 'uncached'] as const) {
    const scenarios = SCENARIOS.filter((scenario) => scenario.server === kind && wanted(scenario.name));
    const exportHere = kind === 'uncached' && wanted('ndjson');
    if (scenarios.length === 0 && !exportHere) continue;
    log(`\nServer with the response cache ${kind === 'cached' ? 'on' : 'off'}`);
    const server = await startUnderBench(served, kind);
    try {
      samples ??= await collectSamples(ORIGIN);
      for (const scenario of scenarios) {
        log(`  ${scenario.name} ...`);
        const result = await runScenario(scenario, samples, options);
        result.serverRssMiB = residentMemory(server.pid).rss / MIB;
        log(`    ${thousands(result.requestsPerSecond)} req/s, p99 ${ms(result.p99)} ms; baseline ${thousands(result.baseline.requestsPerSecond)} req/s; server RSS ${result.serverRssMiB.toFixed(0)} MiB`);
        results.push(result);
      }
      if (exportHere) {
        log('  ndjson export ...');
        ndjson = { ...(await exportAll({})), serverRssMiB: residentMemory(server.pid).rss / MIB };
      }
    } finally {
      await server.stop();
    }
    memory[kind] = { rssMaxMiB: server.rssMax() / MIB };
  }

  const rssMaxMiB = Math.max(...Object.values(memory).map((m) => m.rssMaxMiB));
  const report = {
    startedAt: startedAt.toISOString(),
    machine: machine(),
    git: gitRevision(),
    store: values.store,
    served: 'dataDir' in served ? relative(REPO, served.dataDir) : new URL(served.databaseUrl).pathname.slice(1),
    dataset: samples?.dataset,
    options: { ...options, pageCacheWarmed: !values.cold },
    scenarios: results,
    ndjson: ndjson && { ...ndjson, target: NDJSON_TARGET, met: ndjson.perSecond >= NDJSON_TARGET },
    memory: { ...memory, targetMiB: RSS_TARGET_MIB, met: rssMaxMiB <= RSS_TARGET_MIB },
  };
  const file = writeResults('http', startedAt, report);

  const out = [`\n${describeMachine(report.machine)}`, `${values.store === 'postgres' ? 'PostgreSQL' : 'SQLite'}: ${thousands(samples?.dataset.organizations ?? 0)} organizations, ${options.connections} connections, ${options.seconds} s per scenario\n`];
  out.push(scenarioTable(results));
  if (ndjson !== undefined) {
    out.push(
      `\nndjson export: ${thousands(ndjson.organizations)} organizations, ${(ndjson.bytes / MIB).toFixed(0)} MiB in ${ndjson.seconds.toFixed(1)} s = ${thousands(ndjson.perSecond)} organizations/s (target >= ${thousands(NDJSON_TARGET)}) ${report.ndjson!.met ? 'ok' : 'MISSED'}`,
    );
  }
  out.push(`server RSS, largest seen: ${Object.entries(memory).map(([kind, m]) => `${m.rssMaxMiB.toFixed(0)} MiB (${kind})`).join(', ')} (target <= ${RSS_TARGET_MIB}) ${report.memory.met ? 'ok' : 'MISSED'}`);
  out.push(`\nResults: ${file}`);
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

runMain(main);
