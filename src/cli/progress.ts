import { SingleBar } from 'cli-progress';
import { counted, formatCount } from '../text.ts';
import type { ProgressMode } from '../config.ts';

/** One stage of work with a known total (bytes of input, or rows to write), reporting rows done. */
export interface ProgressStage {
  update(done: number, rows: number): void;
  finish(): void;
}

const LINE_INTERVAL_MS = 2000;


/** Plain lines for logs and pipes: rows done, rows/s, elapsed; at most one per interval. */
function lineStage(label: string, write: (line: string) => void): ProgressStage {
  const started = performance.now();
  let lastLine = started;
  let lastRows = 0;
  const line = (rows: number) => {
    const elapsed = (performance.now() - started) / 1000;
    const rate = elapsed > 0 ? rows / elapsed : 0;
    write(`${label}: ${counted(rows, 'row')}, ${formatCount(rate)} rows/s, ${elapsed.toFixed(1)} s`);
  };
  return {
    update(_done, rows) {
      lastRows = rows;
      const now = performance.now();
      if (now - lastLine < LINE_INTERVAL_MS) return;
      lastLine = now;
      line(rows);
    },
    finish() {
      line(lastRows);
    },
  };
}

/** A bar on a terminal (stderr), with the same figures beside it. */
function barStage(label: string, total: number): ProgressStage {
  const started = performance.now();
  const bar = new SingleBar(
    {
      format: `${label.padEnd(22)} [{bar}] {percentage}% | {rowsText} | {rate} rows/s | {elapsedText}`,
      barsize: 30,
      hideCursor: true,
      clearOnComplete: false,
      stream: process.stderr,
      fps: 5,
      // When a bar is asked for explicitly, draw it even where stderr is not a terminal.
      noTTYOutput: true,
      notTTYSchedule: 500,
    },
    { format: '', barCompleteChar: '#', barIncompleteChar: '-' },
  );
  const payload = (rows: number) => {
    const elapsed = (performance.now() - started) / 1000;
    return { rowsText: counted(rows, 'row'), rate: formatCount(elapsed > 0 ? rows / elapsed : 0), elapsedText: `${elapsed.toFixed(1)} s` };
  };
  bar.start(Math.max(total, 1), 0, payload(0));
  let lastRows = 0;
  return {
    update(done, rows) {
      lastRows = rows;
      bar.update(Math.min(done, total), payload(rows));
    },
    finish() {
      bar.update(Math.max(total, 1), payload(lastRows));
      bar.stop();
    },
  };
}

export function progressStage(mode: ProgressMode, label: string, total: number, write: (line: string) => void): ProgressStage {
  if (mode === 'bar') return barStage(label, total);
  if (mode === 'lines') return lineStage(label, write);
  return { update() {}, finish() {} };
}
