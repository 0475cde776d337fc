/**
 * A probe for bench/fairness.ts, run as a process of its own so that the load generators and the
 * measuring process do not share a thread: requests one at a time at a fixed rate, and a JSON
 * report of their latencies on stdout when done.
 *
 *   node bench/lib/fairness-probe.ts <mode> <origin> <seconds> <path> [<path> ...]
 *
 * Modes:
 *   kept   one kept-alive connection per path; each path asked for every 100 ms, one request at a
 *          time (the next goes out 100 ms after the last was sent, or as soon as it is answered if
 *          that took longer)
 *   new    every 100 ms a new connection (`Connection: close`) for the first path, without waiting
 *          for earlier ones: how long each waits to be accepted and answered
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const INTERVAL_MS = 100;
/** A request not answered within this long counts as unanswered. */
const TIMEOUT_MS = 10_000;
/** What browsers and CDNs send: the cached page is kept compressed. */
const HEADERS = { 'accept-encoding': 'br, gzip' };

export interface ProbeTiming {
  /** performance.timeOrigin-relative ms when it was sent. */
  sentAt: number;
  /** ms from sending to the TCP connection being established (new connections only). */
  connectMs?: number;
  /** ms from sending to the first byte of the answer's head; undefined when unanswered. */
  firstByteMs?: number;
  status?: number;
  error?: string;
}

export interface ProbeReport {
  mode: 'kept' | 'new';
  paths: Record<string, ProbeTiming[]>;
}

function timedRequest(origin: string, path: string, agent: Agent | false, close: boolean): Promise<ProbeTiming> {
  return new Promise((resolve) => {
    const sentAt = performance.now();
    const timing: ProbeTiming = { sentAt: performance.timeOrigin + sentAt };
    let settled = false;
    const settle = (extra: Partial<ProbeTiming>) => {
      if (settled) return;
      settled = true;
      resolve({ ...timing, ...extra });
    };
    const req = request(`${origin}${path}`, { agent, headers: close ? { ...HEADERS, connection: 'close' } : HEADERS, timeout: TIMEOUT_MS }, (response) => {
      const firstByteMs = performance.now() - sentAt;
      response.resume();
      response.on('end', () => settle({ firstByteMs, status: response.statusCode }));
      response.on('error', (error) => settle({ firstByteMs, status: response.statusCode, error: error.message }));
    });
    req.on('socket', (socket) => {
      if (socket.connecting) socket.once('connect', () => (timing.connectMs = performance.now() - sentAt));
    });
    req.on('timeout', () => {
      req.destroy();
      settle({ error: 'timeout' });
    });
    req.on('error', (error) => settle({ error: error.message }));
    req.end();
  });
}

async function kept(origin: string, seconds: number, paths: string[]): Promise<ProbeReport> {
  const deadline = performance.now() + seconds * 1000;
  const report: ProbeReport = { mode: 'kept', paths: {} };
  await Promise.all(
    paths.map(async (path) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const timings: ProbeTiming[] = (report.paths[path] = []);
      while (performance.now() < deadline) {
        const started = performance.now();
        timings.push(await timedRequest(origin, path, agent, false));
        await sleep(Math.max(0, INTERVAL_MS - (performance.now() - started)));
      }
      agent.destroy();
    }),
  );
  return report;
}

async function fresh(origin: string, seconds: number, path: string): Promise<ProbeReport> {
  const pending: Promise<ProbeTiming>[] = [];
  const started = performance.now();
  for (let tick = 0; tick * INTERVAL_MS < seconds * 1000; tick++) {
    await sleep(Math.max(0, started + tick * INTERVAL_MS - performance.now()));
    pending.push(timedRequest(origin, path, false, true));
  }
  return { mode: 'new', paths: { [path]: await Promise.all(pending) } };
}

const [mode, origin, seconds, ...paths] = process.argv.slice(2);
if ((mode !== 'kept' && mode !== 'new') || origin === undefined || seconds === undefined || paths.length === 0) {
  process.stderr.write('usage: node bench/lib/fairness-probe.ts kept|new <origin> <seconds> <path> [<path> ...]\n');
  process.exit(2);
}
const report = mode === 'kept' ? await kept(origin, Number(seconds), paths) : await fresh(origin, Number(seconds), paths[0]!);
process.stdout.write(`${JSON.stringify(report)}\n`);
