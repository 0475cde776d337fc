/**
 * What the benchmarks share: running the project's Node on a script with its peak memory sampled,
 * describing the machine and the checkout, printing a table, and writing a JSON report.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { NODE_FLAGS } from '../../bin/node-flags.js';
import { parseInteger as parseSetting } from '../../src/config.ts';
import type { ChildProcess } from 'node:child_process';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const CACHE_DIR = join(REPO, 'bench', '.cache');
const RESULTS_DIR = join(REPO, 'bench', 'results');
export const MIB = 1024 * 1024;
const POLL_MS = 100;
/** How much of the child's stderr to keep for the JSON report. */
const STDERR_TAIL_CHARS = 4000;

export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  wallSeconds: number;
  /** Largest VmHWM seen, in bytes; null when /proc could not be read. */
  peakRssBytes: number | null;
  stderrTail: string;
}

/** The child running now, so a signal to the benchmark can be passed on to it. */
export let currentChild: ChildProcess | undefined;

/** Reads VmHWM (peak resident set size) of a live process, in bytes. */
export function readPeakRss(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined; // not Linux, or the process has just exited
  }
}

/** Runs the same Node binary on a script, echoing its stderr, timing it and sampling its peak RSS. */
export function runNode(args: string[], cwd = REPO): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...NODE_FLAGS, ...args], { cwd, stdio: ['ignore', 'inherit', 'pipe'] });
    currentChild = child;
    let peak: number | null = null;
    const sample = (): void => {
      if (child.pid === undefined) return;
      const value = readPeakRss(child.pid);
      if (value !== undefined) peak = Math.max(peak ?? 0, value);
    };
    sample();
    const timer = setInterval(sample, POLL_MS);
    let tail = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      process.stderr.write(chunk);
      tail = (tail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    let exit: { code: number | null; signal: string | null; seconds: number } | undefined;
    child.on('exit', (code, signal) => {
      exit = { code, signal, seconds: (performance.now() - started) / 1000 };
      clearInterval(timer);
    });
    child.on('error', (error) => {
      clearInterval(timer);
      currentChild = undefined;
      reject(error);
    });
    // 'close' comes after 'exit' once stderr is drained, so the tail is complete.
    child.on('close', () => {
      currentChild = undefined;
      clearInterval(timer);
      resolvePromise({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        wallSeconds: exit?.seconds ?? (performance.now() - started) / 1000,
        peakRssBytes: peak,
        stderrTail: tail,
      });
    });
  });
}

/** Current and peak resident memory of a live process, in bytes (Linux). */
/** A process's resident memory: all of it, its peak, and the part that is anonymous (heap, buffers, malloc) rather than mapped files. */
export function residentMemory(pid: number): { rss: number; peak: number; anonymous: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM'), anonymous: kb('RssAnon') };
}

export function machine() {
  return {
    cpuModel: cpus()[0]?.model ?? null,
    cpuCount: cpus().length,
    totalMemoryBytes: totalmem(),
    platform: process.platform,
    osRelease: release(),
    arch: process.arch,
    node: process.version,
  };
}

export const describeMachine = (m: ReturnType<typeof machine>): string =>
  `${m.cpuModel} x ${m.cpuCount}, ${(m.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, Node ${m.node}`;

export function gitRevision(checkout = REPO): { commit: string | null; dirty: boolean | null } {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: checkout, encoding: 'utf8' });
  if (head.status !== 0) return { commit: null, dirty: null };
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: checkout, encoding: 'utf8' });
  return { commit: head.stdout.trim(), dirty: status.status === 0 ? status.stdout.trim() !== '' : null };
}

/** A flag's whole number, by the rule the command's own flags follow; `_` may group digits (1_000_000). */
export const parseInteger = (name: string, value: string, min: number, max: number): number => parseSetting(`--${name}`, value.replaceAll('_', ''), min, max);

/** Runs a benchmark's main function: its result is the exit code, and a failure prints its stack. */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

/** A plain-text table; columns in `left` are left-aligned, the rest right-aligned. */
export function formatTable(header: string[], rows: string[][], left: ReadonlySet<number>): string {
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...rows.map((row) => row[i]!.length)));
  const format = (row: string[]): string =>
    row
      .map((cell, i) => (left.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [format(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(format)].join('\n');
}

/** Writes a report as bench/results/<name>-<time>.json (atomically) and returns its path, relative to the checkout. */
export function writeResults(name: string, startedAt: Date, report: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-${startedAt.toISOString().replaceAll(':', '-')}.json`);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  return relative(REPO, file);
}

/** A process's anonymous resident memory (RssAnon), in bytes. */
function residentAnonymous(pid: number): number {
  const match = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) * 1024;
}

/**
 * How much of a process's anonymous memory malloc holds free: what `malloc_trim(0)` gives back to
 * the system, called in the process through gdb (on every machine of this project's kind; root may
 * attach). Node has no call for it, so a server never does this itself: a diagnosis, run last, as
 * it changes the process. Undefined when gdb is missing or cannot attach.
 */
export function mallocHeldFree(pid: number): number | undefined {
  const before = residentAnonymous(pid);
  const trim = spawnSync('gdb', ['-p', String(pid), '-batch', '-ex', 'call (int)malloc_trim(0)'], { encoding: 'utf8', timeout: 60_000 });
  if (trim.error !== undefined || trim.status !== 0 || !/\$1 = [01]/.test(trim.stdout)) return undefined;
  return Math.max(0, before - residentAnonymous(pid));
}

/**
 * Where a process's anonymous memory is, from /proc/<pid>/smaps: glibc's main arena (`[heap]`, what
 * malloc takes with brk), mappings the size of glibc's other arenas (64 MiB reserved each, for
 * threads), and the other anonymous mappings (V8's heap pages, large allocations mmap'd by malloc).
 */
export function anonymousBreakdown(pid: number): { mainArena: number; threadArenas: number; threadArenaCount: number; otherMappings: number } {
  const result = { mainArena: 0, threadArenas: 0, threadArenaCount: 0, otherMappings: 0 };
  let kind: 'main' | 'arena' | 'other' | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header !== null) {
      const size = Number.parseInt(header[2]!, 16) - Number.parseInt(header[1]!, 16);
      const name = header[4]!;
      kind = name === '[heap]' ? 'main' : name !== '' ? undefined : size === 64 * 1024 * 1024 ? 'arena' : 'other';
      if (kind === 'arena') result.threadArenaCount++;
      continue;
    }
    const anonymous = /^Anonymous:\s+(\d+) kB$/.exec(line);
    if (anonymous === null || kind === undefined) continue;
    const bytes = Number(anonymous[1]) * 1024;
    if (kind === 'main') result.mainArena += bytes;
    else if (kind === 'arena') result.threadArenas += bytes;
    else result.otherMappings += bytes;
  }
  return result;
}
