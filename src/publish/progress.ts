/** Periodic plain progress lines (rows done, rows/s, elapsed), at most one every `intervalMs`. */
export function progressReporter(label: string, write: (line: string) => void, intervalMs = 2000) {
  const started = performance.now();
  let lastLine = -Infinity;
  const line = (rows: number) => {
    const elapsed = (performance.now() - started) / 1000;
    const rate = elapsed > 0 ? Math.round(rows / elapsed) : 0;
    return `${label}: ${rows.toLocaleString('en-US')} rows, ${rate.toLocaleString('en-US')} rows/s, ${elapsed.toFixed(1)} s`;
  };
  return {
    update(rows: number): void {
      const now = performance.now();
      if (now - lastLine < intervalMs) return;
      lastLine = now;
      write(line(rows));
    },
    done(rows: number): void {
      write(line(rows));
    },
  };
}
