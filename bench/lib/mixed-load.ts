/**
 * A mixed workload for the load and fault benchmarks (bench/faults.ts): requests of several kinds,
 * drawn in fixed shares from the samples of the served dataset, each with the statuses it may get.
 * Every response is checked as it arrives; anything else (another status, a failed check, a socket
 * error, a timeout) is an error, kept with the time it happened.
 */
import { createHistogram } from 'node:perf_hooks';
import { random } from './http-scenarios.ts';
import { startAutocannon } from './load.ts';
import type { Samples } from './http-scenarios.ts';

const API = '/api/hsds/v3';
const PER_PAGE = 20;
/** An id no organization has. */
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

export interface Drawn {
  kind: string;
  path: string;
  headers?: Record<string, string>;
  /** The statuses this request may get. */
  expected: readonly number[];
  /** What is wrong with an answer of an expected status, if anything. */
  verify?: (status: number, headers: Record<string, string>) => string | undefined;
}

/** Kinds of request and their shares of the load. */
export interface Workload {
  name: string;
  kinds: { kind: string; weight: number; draw: (next: () => number) => Omit<Drawn, 'kind'> }[];
}

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
const pageIn = (next: () => number, pages: number): number => 1 + Math.floor(next() * pages);

/**
 * Every kind of request the API answers, in shares like a public directory's: first pages and single
 * organizations most, then browsing, filtering and search, conditional requests, and mistakes.
 * With `stable`, only requests whose status cannot change when another edition is published.
 */
export function mixedWorkload(samples: Samples, stable = false): Workload {
  const ok = [200] as const;
  const kinds: Workload['kinds'] = [
    { kind: 'first page', weight: 20, draw: () => ({ path: `${API}/organizations`, expected: ok }) },
    { kind: 'any page', weight: 15, draw: (next) => ({ path: `${API}/organizations?page=${pageIn(next, samples.pages)}`, expected: ok }) },
    { kind: 'organization', weight: 20, draw: (next) => ({ path: `${API}/organizations/${pick(next, samples.ids)}`, expected: ok }) },
    {
      kind: 'term page',
      weight: 10,
      draw: (next) => {
        const term = pick(next, samples.terms);
        return { path: `${API}/organizations?taxonomy_term_id=${term.id}&page=${pageIn(next, term.pages)}`, expected: ok };
      },
    },
    {
      kind: 'search',
      weight: 10,
      draw: (next) => {
        const search = pick(next, samples.searches);
        return { path: `${API}/organizations?search=${encodeURIComponent(search.query)}&page=${pageIn(next, Math.min(5, search.pages))}`, expected: ok };
      },
    },
    { kind: 'terms', weight: 5, draw: (next) => ({ path: `${API}/taxonomy_terms?page=${pageIn(next, 20)}&per_page=${PER_PAGE}`, expected: ok }) },
  ];
  if (!stable) {
    kinds.push(
      {
        kind: 'revalidation',
        weight: 10,
        // A 304 while the ETag is current; once another dataset is published, the new page.
        draw: () => ({
          path: `${API}/organizations`,
          headers: { 'if-none-match': samples.etag },
          expected: [304, 200],
          verify: (status, headers) => (status === 200 && headers.etag === samples.etag ? 'a 200 with the very ETag asked about' : undefined),
        }),
      },
      { kind: 'unknown id', weight: 5, draw: () => ({ path: `${API}/organizations/${UNKNOWN_ID}`, expected: [404] }) },
      { kind: 'bad parameter', weight: 5, draw: (next) => ({ path: `${API}/organizations?per_page=${101 + Math.floor(next() * 900)}`, expected: [400] }) },
    );
  }
  return { name: stable ? 'stable mix' : 'full mix', kinds };
}

/** Draws requests of a workload in their shares, from a seeded generator. */
function drawer(workload: Workload, seed: number): () => Drawn {
  const next = random(seed);
  const total = workload.kinds.reduce((sum, kind) => sum + kind.weight, 0);
  return () => {
    let roll = next() * total;
    for (const kind of workload.kinds) {
      roll -= kind.weight;
      if (roll < 0) return { kind: kind.kind, ...kind.draw(next) };
    }
    const last = workload.kinds.at(-1)!;
    return { kind: last.kind, ...last.draw(next) };
  };
}

/** A response of the load, as the check sees it. */
export interface Answer {
  kind: string;
  status: number;
  body: string;
  headers: Record<string, string>;
  /** performance.now() when the request was sent. */
  sentAt: number;
}

export interface MixedLoadOptions {
  origin: string;
  workload: Workload;
  connections: number;
  /** How long to run, ramp included; without it, until stop(). */
  seconds?: number;
  /**
   * The first seconds, reported apart and not measured: connections opened, code compiled, caches
   * filled. A busy Node server accepts one connection per turn of its event loop (libuv since 1.45),
   * so of many connections opened at once the last wait many turns for their first answer.
   */
  rampSeconds?: number;
  /** Accept-Encoding of every request ('' for identity bodies a check can read). */
  acceptEncoding: string;
  /** Looks at each answer with an expected status; returns what is wrong with it, if anything. */
  check?: (answer: Answer) => string | undefined;
  seed?: number;
}

export interface LoadError {
  /** performance.now() when it happened (in reports: seconds into the phase). */
  at: number;
  what: string;
}

export interface MixedLoadResult {
  /** The ramp: its answers, its errors (not counted below) and its slowest answer. */
  ramp: { seconds: number; requests: number; errors: number; maxMs: number; errorSamples: LoadError[] };
  /** From here on: after the ramp. */
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  /** Milliseconds, over every answer. */
  p50: number;
  p99: number;
  max: number;
  errors: number;
  /** The first errors of each kind, with their times. */
  errorSamples: LoadError[];
  /** The first answers that took longer than SLOW_MS, with their times. */
  slowSamples: LoadError[];
  /** Answers per kind of request. */
  kinds: Record<string, number>;
  statuses: Record<string, number>;
}

export interface MixedLoad {
  done: Promise<MixedLoadResult>;
  /** Resolves when the ramp is over. */
  ramped: Promise<void>;
  stop: () => void;
  /** Errors so far that happened after `since` (performance.now()), and the first few of them. */
  errorsSince: (since: number) => { count: number; first: LoadError[] };
}

const ERROR_SAMPLES = 20;
/** A request without an answer for this long is an error. */
const TIMEOUT_SECONDS = 10;
/** An answer worth listing (ms): far beyond the p99 of any load here. */
const SLOW_MS = 2000;

interface Context {
  drawn?: Drawn;
  sentAt?: number;
}

/** Starts the load; it ends after `seconds`, or when stopped. */
export function startMixedLoad(options: MixedLoadOptions): MixedLoad {
  const draw = drawer(options.workload, options.seed ?? 7);
  const latencies = createHistogram();
  const rampLatencies = createHistogram();
  const rampErrors: LoadError[] = [];
  const kinds: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const errors: LoadError[] = [];
  const errorSamples: LoadError[] = [];
  let rampErrorCount = 0;
  const sampled = new Set<string>();
  const slowSamples: LoadError[] = [];
  const started = performance.now();
  const rampMs = (options.rampSeconds ?? 0) * 1000;
  const measuredFrom = started + rampMs;
  const ramped = new Promise<void>((resolve) => setTimeout(resolve, rampMs));
  const fail = (what: string, sentAt = performance.now()) => {
    const at = performance.now();
    if (sentAt < measuredFrom) {
      if (rampErrors.length < ERROR_SAMPLES) rampErrors.push({ at, what });
      rampErrorCount++;
      return;
    }
    errors.push({ at, what });
    // Timeouts are each listed (up to the limit): when they happen tells what held them up.
    const key = what.startsWith('socket: request timed out') ? String(errors.length) : what.slice(0, 60);
    if (errorSamples.length < ERROR_SAMPLES && !sampled.has(key)) {
      sampled.add(key);
      errorSamples.push({ at, what });
    }
  };
  const defaultHeaders: Record<string, string> = options.acceptEncoding === '' ? {} : { 'accept-encoding': options.acceptEncoding };

  const instance = startAutocannon({
    url: options.origin,
    connections: options.connections,
    // autocannon wants a duration; a run without one is stopped from outside.
    duration: options.seconds ?? 24 * 3600,
    timeout: TIMEOUT_SECONDS,
    headers: defaultHeaders,
    requests: [
      {
        setupRequest: (request, context: Context) => {
          const drawn = draw();
          context.drawn = drawn;
          context.sentAt = performance.now();
          request.path = drawn.path;
          request.headers = drawn.headers === undefined ? defaultHeaders : { ...defaultHeaders, ...drawn.headers };
          return request;
        },
        onResponse: (status, body, context: Context, headers) => {
          const drawn = context.drawn!;
          const took = performance.now() - context.sentAt!;
          if (took > SLOW_MS && slowSamples.length < ERROR_SAMPLES) slowSamples.push({ at: performance.now(), what: `${drawn.kind}: ${status} after ${Math.round(took)} ms for ${drawn.path}` });
          kinds[drawn.kind] = (kinds[drawn.kind] ?? 0) + 1;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (!drawn.expected.includes(status)) {
            fail(`${drawn.kind}: ${status} for ${drawn.path}`, context.sentAt);
            return;
          }
          const wrong = drawn.verify?.(status, headers as Record<string, string>) ?? options.check?.({ kind: drawn.kind, status, body, headers: headers as Record<string, string>, sentAt: context.sentAt! });
          if (wrong !== undefined) fail(`${drawn.kind}: ${wrong} (${drawn.path})`, context.sentAt);
        },
      },
    ],
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, milliseconds: number) => {
    (performance.now() < measuredFrom ? rampLatencies : latencies).record(Math.max(1, Math.round(milliseconds * 1000)));
  });
  // A timeout belongs to the moment its request went out, TIMEOUT_SECONDS before.
  instance.on('reqError', (error: Error) => fail(`socket: ${error.message}`, performance.now() - (error.message === 'request timed out' ? TIMEOUT_SECONDS * 1000 : 0)));

  const result = Promise.resolve(instance).then(() => {
    const seconds = (performance.now() - measuredFrom) / 1000;
    const ms = (microseconds: number) => microseconds / 1000;
    return {
      ramp: { seconds: rampMs / 1000, requests: rampLatencies.count, errors: rampErrorCount, maxMs: ms(rampLatencies.max), errorSamples: rampErrors },
      seconds,
      requests: latencies.count,
      requestsPerSecond: latencies.count / seconds,
      p50: ms(latencies.percentile(50)),
      p99: ms(latencies.percentile(99)),
      max: ms(latencies.max),
      errors: errors.length,
      errorSamples,
      slowSamples,
      kinds,
      statuses,
    };
  });
  return {
    done: result,
    ramped,
    stop: () => instance.stop(),
    errorsSince: (since) => {
      const after = errors.filter((error) => error.at > since);
      return { count: after.length, first: after.slice(0, ERROR_SAMPLES) };
    },
  };
}
