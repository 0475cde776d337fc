/**
 * HTTP for the benchmarks: raw requests (bytes as sent, nothing decoded) and autocannon load runs
 * with sub-millisecond latencies.
 */
import { get } from 'node:http';
import { createHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Headers a recorded response must not carry into a replay: the connection's, and the date. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date']);

export function fetchRaw(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const kept = Object.entries(response.headers).filter(([name]) => !HOP_BY_HOP.has(name));
        resolve({ status: response.statusCode!, headers: Object.fromEntries(kept.map(([name, value]) => [name, String(value)])), body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    }).on('error', reject);
  });
}

export async function fetchJson(url: string): Promise<any> {
  const response = await fetchRaw(url);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${response.body.toString()}`);
  return JSON.parse(response.body.toString());
}

export async function waitUntilUp(url: string, seconds = 120): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const up = await fetchRaw(url).then(
      (response) => response.status < 500,
      () => false,
    );
    if (up) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${seconds} s`);
}

export interface LoadOptions {
  /** Origin, e.g. http://127.0.0.1:8080 */
  origin: string;
  /** The path (and query) of each request, called once per request. */
  nextPath: () => string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Statuses counted as answers; anything else is an error. */
  expectedStatus: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

/**
 * An autocannon run: its events, and (as its README says of a run started without a callback) a
 * promise of its result. The types know only one or the other.
 */
export const startAutocannon = (options: autocannon.Options): autocannon.Instance & PromiseLike<autocannon.Result> =>
  autocannon(options) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;

export async function load(options: LoadOptions): Promise<LoadResult> {
  // autocannon's own histogram has a 1 ms resolution; these targets are 2 ms.
  const latencies = createHistogram();
  let errors = 0;
  const instance = startAutocannon({
    url: options.origin,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
    requests: [
      {
        setupRequest: (request) => {
          request.path = options.nextPath();
          return request;
        },
      },
    ],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, milliseconds: number) => {
    if (status === options.expectedStatus) latencies.record(Math.max(1, Math.round(milliseconds * 1000)));
    else errors++;
  });
  const result = await instance;
  const count = latencies.count;
  const ms = (microseconds: number) => microseconds / 1000;
  return {
    requests: count,
    requestsPerSecond: count / options.seconds,
    p50: ms(latencies.percentile(50)),
    p99: ms(latencies.percentile(99)),
    max: ms(latencies.max),
    errors: errors + result.errors + result.timeouts,
  };
}
