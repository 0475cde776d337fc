/**
 * What verifying a snapshot costs, to choose how a server checks a snapshot before serving it (issue
 * 15): the SHA-256 of the whole file against its checksum (what the server does), SQLite's
 * `PRAGMA quick_check`, and, for scale, a plain read of the file. Each is timed with the file in the
 * page cache (a server that has been serving it, or a snapshot just written by an import) and, when
 * the page cache can be dropped (root), cold. Then the whole start of `serve`, to ready, is timed.
 *
 * Usage: node bench/snapshot-verify.ts [--organizations N] [--seed S] [--data-dir DIR] [--rounds R]
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { verifySnapshot } from '../src/store/sqlite/snapshot-directory.ts';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, parseInteger, runMain, writeResults } from './lib/run.ts';
import { liveSnapshot, servedSynthetic, startServer, warmPageCache } from './lib/served.ts';

const USAGE = `Usage: node bench/snapshot-verify.ts [options]

Times the ways of checking a published snapshot before serving it, and the start of serve.

Options:
  --organizations N  size of the synthetic dataset (default 2000000), published once (as npm run bench does)
  --seed S           its seed (default 1)
  --data-dir DIR     a data directory to measure instead
  --rounds R         rounds of each measurement (default 3)
  --help`;

async function readWhole(file: string): Promise<void> {
  for await (const chunk of createReadStream(file, { highWaterMark: MIB })) void chunk;
}

function quickCheck(file: string): void {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const rows = db.prepare('PRAGMA quick_check').all() as { quick_check: string }[];
    if (rows[0]?.quick_check !== 'ok') throw new Error(`quick_check: ${rows[0]?.quick_check}`);
  } finally {
    db.close();
  }
}

/** Drops the page cache, when this process may (root on Linux); false otherwise. */
function dropPageCache(): boolean {
  spawnSync('sync');
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

const seconds = async (step: () => unknown): Promise<number> => {
  const started = performance.now();
  await step();
  return (performance.now() - started) / 1000;
};

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      organizations: { type: 'string', default: '2000000' },
      seed: { type: 'string', default: '1' },
      'data-dir': { type: 'string' },
      rounds: { type: 'string', default: '3' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const startedAt = new Date();
  const rounds = parseInteger('rounds', values.rounds, 1, 100);
  const dataDir = values['data-dir'] ?? (await servedSynthetic(parseInteger('organizations', values.organizations, 1, 999_999_999), parseInteger('seed', values.seed, 0, 0xffffffff)));
  const file = liveSnapshot(dataDir);
  const bytes = statSync(file).size;
  log(`Measuring ${file} (${(bytes / MIB).toFixed(0)} MiB), ${rounds} round(s).`);

  const methods: [string, () => unknown][] = [
    ['read the file', () => readWhole(file)],
    ['SHA-256 against the checksum (served)', () => verifySnapshot(file)],
    ['PRAGMA quick_check', () => quickCheck(file)],
  ];
  const times: Record<string, { warm: number[]; cold: number[] }> = {};
  let canDrop = true;
  for (let round = 0; round < rounds; round++) {
    for (const [name, step] of methods) {
      times[name] ??= { warm: [], cold: [] };
      if (canDrop && dropPageCache()) times[name].cold.push(await seconds(step));
      else canDrop = false;
      await warmPageCache(dataDir);
      times[name].warm.push(await seconds(step));
    }
  }
  const starts: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await warmPageCache(dataDir);
    const started = performance.now();
    const server = await startServer({ dataDir }, 18_000 + round);
    starts.push((performance.now() - started) / 1000);
    await server.stop();
  }

  const median = (values: number[]) => (values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
  const format = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(2));
  const rate = (value: number) => (Number.isNaN(value) ? '-' : (bytes / MIB / value).toFixed(0));
  const rows = methods.map(([name]) => {
    const { warm, cold } = times[name]!;
    return [name, format(median(warm)), rate(median(warm)), format(median(cold)), rate(median(cold))];
  });
  process.stdout.write(`${describeMachine(machine())}\n${file}: ${(bytes / MIB).toFixed(0)} MiB\n\n`);
  process.stdout.write(`${formatTable(['check', 'warm s', 'MiB/s', 'cold s', 'MiB/s'], rows, new Set([0]))}\n\n`);
  process.stdout.write(`serve, from start to answering (page cache warm, verification included): median ${format(median(starts))} s (${starts.map(format).join(', ')})\n`);
  if (!canDrop) process.stdout.write('(cold figures need root, to drop the page cache)\n');
  const report = { startedAt: startedAt.toISOString(), git: gitRevision(), machine: machine(), file, bytes, rounds, times, serveStartSeconds: starts };
  process.stdout.write(`\nResults: ${writeResults('snapshot-verify', startedAt, report)}\n`);
  return 0;
}

runMain(main);
