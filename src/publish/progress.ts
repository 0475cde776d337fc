/** Periodic plain progress lines (rows done, rows/s, elapsed since the first update), one every `intervalMs` at most. */
export function progressReporter(label: string, write: (line: string) => void, intervalMs = 2000) {
  let started: number | undefined;
  let lastLine = 0;
  return {
    update(rows: number): void {
      const now = performance.now();
      if (started === undefined) {
        started = lastLine = now;
        return;
      }
      if (now - lastLine < intervalMs) return;
      lastLine = now;
      const elapsed = (now - started) / 1000;
      const rate = elapsed > 0 ? Math.round(rows / elapsed) : 0;
      write(`${label}: ${rows.toLocaleString('en-US')} rows, ${rate.toLocaleString('en-US')} rows/s, ${elapsed.toFixed(1)} s`);
    },
  };
}
