/**
 * The exchange (`npm run bench:exchange`, docs/exchange.md), on a published dataset:
 * - the package: how long `export` takes and how much memory, the size of each file and of the
 *   archive, and what the server does when `/datapackage.zip` is first asked for (how long the
 *   archive takes to make, how long a request for another path waits meanwhile, the server's peak
 *   memory), then the same request again (the file, sent as it is);
 * - with `--copies`: another instance (a copy of the dataset, published from its package, served
 *   with the default settings), a harvest of it (`import <URL> --harvest-rate 0`), a first `sync`
 *   (a full copy), then 10 organizations renamed upstream and the `sync` that follows: the time and
 *   peak memory of each, and whether the copy then serves upstream's dataset version.
 * Prints tables and writes bench/results/exchange-<time>.json.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import { plainCsvField } from '../src/http/csv.ts';
import { fetchJson, fetchRaw } from './lib/load.ts';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, residentMemory, runMain, runNode, writeResults } from './lib/run.ts';
import { API, servedBundled, startServer } from './lib/served.ts';

const USAGE = `Usage: node bench/exchange.ts [--data-dir DIR] [--copies]

Times \`export\` on a published data directory (default: the bundled dataset, imported once into
bench/.cache/), then serves it with its default settings and times the first and a second
GET ${API}/datapackage.zip, with a cached path asked every 20 ms meanwhile. With --copies, also a
harvest of another instance and a sync after 10 organizations change there.`;

const PORT = 21_000 + (process.pid % 1000);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const PROBE_EVERY_MS = 20;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, copies: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const startedAt = new Date();
  const dataDir = values['data-dir'] === undefined ? await servedBundled() : resolve(values['data-dir']);
  const folder = mkdtempSync(join(tmpdir(), 'hsds-exchange-bench-'));
  try {
    log(`export --data-dir ${dataDir} ...`);
    const run = await runNode(['src/cli.ts', 'export', '--data-dir', dataDir, join(folder, 'package')]);
    if (run.exitCode !== 0) throw new Error(`export failed (${run.exitCode}): ${run.stderrTail}`);
    const files = readdirSync(join(folder, 'package')).map((name) => ({ name, bytes: statSync(join(folder, 'package', name)).size }));

    rmSync(join(dataDir, 'packages'), { recursive: true, force: true });
    log('serve (default settings) and GET /datapackage.zip twice ...');
    const server = await startServer({ dataDir }, PORT);
    try {
      await fetchRaw(`${ORIGIN}${API}/taxonomies`);
      const before = residentMemory(server.pid).rss;
      const waits: number[] = [];
      let making = true;
      const probing = (async () => {
        while (making) {
          const started = performance.now();
          await fetchRaw(`${ORIGIN}${API}/taxonomies`);
          waits.push(performance.now() - started);
          await sleep(PROBE_EVERY_MS);
        }
      })();
      // A package that takes longer to make than a request waits is a 503 with Retry-After: asked
      // again every second until it is there (a client honouring Retry-After would wait longer).
      let started = performance.now();
      let first = await fetchRaw(`${ORIGIN}${API}/datapackage.zip`);
      let refused = 0;
      while (first.status === 503) {
        refused++;
        await sleep(1000);
        first = await fetchRaw(`${ORIGIN}${API}/datapackage.zip`);
      }
      const firstSeconds = (performance.now() - started) / 1000;
      making = false;
      await probing;
      if (first.status !== 200) throw new Error(`first GET: ${first.status} ${first.body.toString().slice(0, 200)}`);
      started = performance.now();
      const second = await fetchRaw(`${ORIGIN}${API}/datapackage.zip`);
      const secondSeconds = (performance.now() - started) / 1000;
      const memory = residentMemory(server.pid);
      waits.sort((a, b) => a - b);
      const report = {
        benchmark: 'exchange',
        startedAt: startedAt.toISOString(),
        machine: machine(),
        revision: gitRevision(),
        dataDir,
        exportCommand: { seconds: run.wallSeconds, peakRssBytes: run.peakRssBytes, files },
        server: {
          firstSeconds,
          refusedWhileMaking: refused,
          secondSeconds,
          archiveBytes: first.body.length,
          sameBytes: first.body.equals(second.body),
          rssBefore: before,
          rssPeak: memory.peak,
          rssAfter: memory.rss,
          probes: { count: waits.length, p50Ms: quantile(waits, 0.5), p99Ms: quantile(waits, 0.99), maxMs: waits.at(-1) },
        },
        copies: values.copies ? await measureCopies(folder) : undefined,
      };
      const file = writeResults('exchange', startedAt, report);
      const mib = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? '-' : (bytes / MIB).toFixed(1));
      process.stdout.write(
        [
          `${describeMachine(report.machine)}; commit ${report.revision.commit?.slice(0, 10) ?? 'unknown'}${report.revision.dirty ? ' (dirty)' : ''}`,
          `export: ${run.wallSeconds.toFixed(1)} s (the whole command), peak RSS ${mib(run.peakRssBytes)} MiB`,
          formatTable(['file', 'MiB'], files.map(({ name, bytes }) => [name, mib(bytes)]), new Set([0])),
          `server: first GET ${firstSeconds.toFixed(1)} s (made then sent${refused > 0 ? `; ${refused} × 503 while it was made, asked again every second` : ''}), second ${secondSeconds.toFixed(2)} s (sent as kept); archive ${mib(first.body.length)} MiB; the same bytes both times: ${report.server.sameBytes}`,
          `server RSS ${mib(before)} MiB before, ${mib(memory.peak)} MiB at its peak, ${mib(memory.rss)} MiB after`,
          `${waits.length} requests for ${API}/taxonomies meanwhile: p50 ${report.server.probes.p50Ms.toFixed(1)} ms, p99 ${report.server.probes.p99Ms.toFixed(1)} ms, max ${report.server.probes.maxMs?.toFixed(1)} ms`,
          ...(report.copies === undefined
            ? []
            : [
                formatTable(
                  ['step', 's', 'peak RSS MiB', 'version'],
                  report.copies.steps.map((step) => [step.name, step.seconds.toFixed(1), mib(step.peakRssBytes), step.version ?? '-']),
                  new Set([0, 3]),
                ),
                `the copy serves upstream's version after the last sync: ${report.copies.inStep}`,
              ]),
          `results: ${file}`,
          '',
        ].join('\n'),
      );
    } finally {
      await server.stop();
    }
    return 0;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The version a data directory's live snapshot holds (its file name ends with it). */
function liveVersion(dataDir: string): string | undefined {
  try {
    return /-([0-9a-f]{16})\.sqlite$/.exec(readFileSync(join(dataDir, 'current'), 'utf8').trim())?.[1];
  } catch {
    return undefined;
  }
}

interface Step {
  name: string;
  seconds: number;
  peakRssBytes: number | null;
  version?: string;
}

/**
 * Another instance, published from the package in `folder`, served on its own port: harvested,
 * synced (a full copy), then changed (10 organizations renamed, published from the edited package)
 * and synced again.
 */
async function measureCopies(folder: string): Promise<{ steps: Step[]; inStep: boolean }> {
  const steps: Step[] = [];
  const step = async (name: string, args: string[], dataDir: string): Promise<void> => {
    log(`${name}: ${args.join(' ')} ...`);
    const run = await runNode(['src/cli.ts', ...args]);
    if (run.exitCode !== 0) throw new Error(`${name} failed (${run.exitCode}): ${run.stderrTail}`);
    steps.push({ name, seconds: run.wallSeconds, peakRssBytes: run.peakRssBytes, version: liveVersion(dataDir) });
  };
  const packageDir = join(folder, 'package');
  const upstream = join(folder, 'upstream');
  await step('publish upstream from the package', ['import', '--data-dir', upstream, '--progress', 'none', packageDir], upstream);
  const port = PORT + 1;
  const server = await startServer({ dataDir: upstream }, port);
  const base = `http://127.0.0.1:${port}${API}`;
  try {
    await step('harvest (import <URL>)', ['import', '--data-dir', join(folder, 'harvested'), '--harvest-rate', '0', '--progress', 'none', base], join(folder, 'harvested'));
    const copy = join(folder, 'copy');
    await step('first sync (a full copy)', ['sync', '--data-dir', copy, '--harvest-rate', '0', '--progress', 'none', base], copy);
    // 10 organizations renamed upstream.
    const file = join(packageDir, 'organizations.csv');
    const rows = parse(readFileSync(file)) as string[][];
    const name = rows[0]!.indexOf('name');
    for (let index = 1; index <= 10; index++) rows[index]![name] = `${rows[index]![name]} (renamed)`;
    writeFileSync(file, rows.map((row) => `${row.map(plainCsvField).join(',')}\r\n`).join(''));
    await step('publish upstream with 10 organizations renamed', ['import', '--data-dir', upstream, '--progress', 'none', packageDir], upstream);
    const upstreamVersion = liveVersion(upstream);
    for (let tries = 0; tries < 600; tries++) {
      if ((await fetchJson(`${base}/`)).dataset.version === upstreamVersion) break;
      await sleep(100);
    }
    await step('sync after the change', ['sync', '--data-dir', copy, '--harvest-rate', '0', '--progress', 'none', base], copy);
    return { steps, inStep: liveVersion(copy) === upstreamVersion };
  } finally {
    await server.stop();
  }
}

runMain(main);
