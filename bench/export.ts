/**
 * The HSDS tabular package (`npm run bench:export`): how long `export` takes and how much memory, the
 * size of each file and of the archive, and what the server does when `/datapackage.zip` is first
 * asked for: how long the archive takes to make, how long a request for another path waits
 * meanwhile (a cached path, asked every 20 ms), and the server's peak memory. Then the same request
 * again (the file, sent as it is). Prints a table and writes bench/results/export-<time>.json.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fetchRaw } from './lib/load.ts';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, residentMemory, runMain, runNode, writeResults } from './lib/run.ts';
import { API, servedBundled, startServer } from './lib/served.ts';

const USAGE = `Usage: node bench/export.ts [--data-dir DIR]

Times \`export\` on a published data directory (default: the bundled dataset, imported once into
bench/.cache/), then serves it with its default settings and times the first and a second
GET ${API}/datapackage.zip, with a cached path asked every 20 ms meanwhile.`;

const PORT = 21_000 + (process.pid % 1000);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const PROBE_EVERY_MS = 20;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', default: false } } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const startedAt = new Date();
  const dataDir = values['data-dir'] === undefined ? await servedBundled() : resolve(values['data-dir']);
  const folder = mkdtempSync(join(tmpdir(), 'hsds-export-bench-'));
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
        benchmark: 'export',
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
      };
      const file = writeResults('export', startedAt, report);
      const mib = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? '-' : (bytes / MIB).toFixed(1));
      process.stdout.write(
        [
          `${describeMachine(report.machine)}; commit ${report.revision.commit?.slice(0, 10) ?? 'unknown'}${report.revision.dirty ? ' (dirty)' : ''}`,
          `export: ${run.wallSeconds.toFixed(1)} s (the whole command), peak RSS ${mib(run.peakRssBytes)} MiB`,
          formatTable(['file', 'MiB'], files.map(({ name, bytes }) => [name, mib(bytes)]), new Set([0])),
          `server: first GET ${firstSeconds.toFixed(1)} s (made then sent${refused > 0 ? `; ${refused} × 503 while it was made, asked again every second` : ''}), second ${secondSeconds.toFixed(2)} s (sent as kept); archive ${mib(first.body.length)} MiB; the same bytes both times: ${report.server.sameBytes}`,
          `server RSS ${mib(before)} MiB before, ${mib(memory.peak)} MiB at its peak, ${mib(memory.rss)} MiB after`,
          `${waits.length} requests for ${API}/taxonomies meanwhile: p50 ${report.server.probes.p50Ms.toFixed(1)} ms, p99 ${report.server.probes.p99Ms.toFixed(1)} ms, max ${report.server.probes.maxMs?.toFixed(1)} ms`,
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

runMain(main);
