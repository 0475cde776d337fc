/**
 * What the fault benchmark (bench/faults.ts) watches of the server: a fixed set of responses to
 * compare byte for byte across a fault, its longest event-loop stall each second, and its resident
 * memory each second.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { random } from './http-scenarios.ts';
import { fetchRaw } from './load.ts';
import type { Workload } from './mixed-load.ts';
import { residentMemory } from './run.ts';

/** Requests compared byte for byte before and after each fault. */
const REFERENCE_REQUESTS = 40;
const REFERENCE_SEED = 11;

export const sinceMs = (start: number) => performance.now() - start;

/** Status, ETag and identity body of a response: what must not change across a fault. */
async function fingerprint(origin: string, path: string): Promise<string> {
  const response = await fetchRaw(`${origin}${path}`);
  return `${response.status} ${response.headers.etag} ${response.body.toString('base64')}`;
}

/** Fingerprints of a fixed set of requests, a few of each kind, to compare before and after a fault. */
export async function referenceResponses(origin: string, workload: Workload): Promise<Map<string, string>> {
  const responses = new Map<string, string>();
  const next = random(REFERENCE_SEED);
  for (let index = 0; responses.size < REFERENCE_REQUESTS; index++) {
    const { path } = workload.kinds[index % workload.kinds.length]!.draw(next);
    responses.set(path, await fingerprint(origin, path));
  }
  return responses;
}

/** The requests of a reference whose responses are not what they were. */
export async function differences(origin: string, reference: Map<string, string>): Promise<string[]> {
  const changed: string[] = [];
  for (const [path, before] of reference) if ((await fingerprint(origin, path)) !== before) changed.push(path);
  return changed;
}

/**
 * The server's longest event-loop stall in each second (its /metrics, read once a second): a stall
 * holds up every connection at once.
 */
export function watchEventLoop(origin: string): { samples: { at: number; maxMs: number }[]; stop: () => void } {
  const samples: { at: number; maxMs: number }[] = [];
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const sentAt = performance.now();
      const text = await fetchRaw(`${origin}/metrics`).then((response) => response.body.toString(), () => '');
      const max = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
      if (max !== null) samples.push({ at: sentAt, maxMs: Number(max[1]) * 1000 });
      await sleep(Math.max(0, 1000 - sinceMs(sentAt)));
    }
  })();
  return { samples, stop: () => (stopped = true) };
}

/** Resident memory of a process once a second, from now. */
export function sampleMemory(pid: number): { samples: { second: number; rss: number }[]; stop: () => void } {
  const samples: { second: number; rss: number }[] = [];
  const started = performance.now();
  const timer = setInterval(() => {
    try {
      samples.push({ second: Math.round(sinceMs(started) / 1000), rss: residentMemory(pid).rss });
    } catch {
      // exited
    }
  }, 1000);
  return { samples, stop: () => clearInterval(timer) };
}
