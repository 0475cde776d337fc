/**
 * Periodic plain progress lines (rows done, rows/s, elapsed since the first update): the first
 * update, then at most one every `intervalMs`.
 */
export function progressReporter(label: string, write: (line: string) => void, intervalMs = 2000) {
  let started: number | undefined;
  let lastLine = -Infinity;
  return {
    update(rows: number): void {
      const now = performance.now();
      started ??= now;
      if (now - lastLine < intervalMs) return;
      lastLine = now;
      const elapsed = (now - started) / 1000;
      const rate = elapsed > 0 ? Math.round(rows / elapsed) : 0;
      write(`${label}: ${rows.toLocaleString('en-US')} rows, ${rate.toLocaleString('en-US')} rows/s, ${elapsed.toFixed(1)} s`);
    },
  };
}
