import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { StoreProvider } from '../../../store/store.ts';
import { clientErrorHandler, createLimitedServer } from '../../limits.ts';
import { METRICS_PATH } from '../../operational.ts';
import { writeProblem } from '../../problem.ts';

/** Request durations, in seconds: from a cache hit (well under a millisecond) to a slow export. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** A port and interface of its own for `/metrics`, away from the public API. */
export interface MetricsListener {
  port: number;
  host: string;
}

export interface MetricsOptions {
  stores: StoreProvider;
  /** Where to serve `/metrics`; unset: on the app's own port. */
  listener?: MetricsListener;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The server of the metrics port, when one is configured (listening once the app is ready). */
    metricsServer?: Server;
  }
}

/** A metric as prom-client's Registry reads it out (what its own Counter and Histogram give). */
interface MetricReadout {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  /** How the workers' values are merged (prom-client's AggregatorRegistry). */
  aggregator: 'sum';
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

/** One (method, route, status): its requests, their total duration, and how many took each bucket's bound or less (not cumulative). */
interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  buckets: Float64Array;
}

/**
 * `hsds_http_requests_total` and `hsds_http_request_duration_seconds`, counted with plain arithmetic
 * and read out in prom-client's own form (a counter and a histogram): prom-client's labelled
 * metrics check and hash their labels on every call, which cost a cache hit a third of its time.
 */
class RequestMetrics {
  /** By route, then by method and status in one number (see record): no key is made per request. */
  private readonly series = new Map<string, Map<number, RequestSeries>>();
  private readonly methods = new Map<string, number>();

  record(method: string, route: string, status: number, seconds: number): void {
    let ofRoute = this.series.get(route);
    if (ofRoute === undefined) {
      ofRoute = new Map();
      this.series.set(route, ofRoute);
    }
    let methodIndex = this.methods.get(method);
    if (methodIndex === undefined) {
      methodIndex = this.methods.size;
      this.methods.set(method, methodIndex);
    }
    const key = methodIndex * 1000 + status;
    let series = ofRoute.get(key);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(DURATION_BUCKETS.length) };
      ofRoute.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    if (bucket < DURATION_BUCKETS.length) series.buckets[bucket]!++;
  }

  /** Metric objects for a prom-client Registry (registerMetric reads `name`, `get` and `reset`). */
  metrics() {
    const all = () => [...this.series.values()].flatMap((ofRoute) => [...ofRoute.values()]);
    const reset = () => this.series.clear();
    const requests = {
      name: 'hsds_http_requests_total',
      reset,
      get: async (): Promise<MetricReadout> => ({
        name: 'hsds_http_requests_total',
        help: 'HTTP requests answered',
        type: 'counter',
        aggregator: 'sum',
        values: all().map((series) => ({ labels: series.labels, value: series.count })),
      }),
    };
    const name = 'hsds_http_request_duration_seconds';
    const durations = {
      name,
      reset,
      get: async (): Promise<MetricReadout> => ({
        name,
        help: 'Time from the request arriving to the response sent',
        type: 'histogram',
        aggregator: 'sum',
        values: all().flatMap((series) => {
          let below = 0;
          return [
            ...DURATION_BUCKETS.map((bound, index) => {
              below += series.buckets[index]!;
              return { labels: { ...series.labels, le: bound }, value: below, metricName: `${name}_bucket` };
            }),
            { labels: { ...series.labels, le: '+Inf' }, value: series.count, metricName: `${name}_bucket` },
            { labels: series.labels, value: series.sum, metricName: `${name}_sum` },
            { labels: series.labels, value: series.count, metricName: `${name}_count` },
          ];
        }),
      }),
    };
    return [requests, durations];
  }
}

const METRICS_METHODS = 'GET, HEAD';

/** What a worker of `serve --workers` asks the primary process for, and is answered: the metrics of all workers. */
export const METRICS_REQUEST = 'hsds:metrics';
export interface MetricsMessage {
  type: typeof METRICS_REQUEST;
  id: string;
  text?: string;
  error?: string;
}

/** How long a worker waits for the primary process to gather every worker's metrics. */
const GATHER_TIMEOUT_MS = 5000;

/**
 * The metrics text: this process's, or in a worker of `serve --workers`, every worker's summed up by
 * the primary process (see cli/workers.ts), which asks each for its registry.
 */
function metricsReader(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  AggregatorRegistry.setRegistries([registry]);
  // Constructed in a worker, it starts answering the primary's requests for this registry (prom-client's cluster.js).
  new AggregatorRegistry();
  return () =>
    new Promise((resolve, reject) => {
      const id = randomUUID();
      const onMessage = (message: MetricsMessage) => {
        if (message?.type !== METRICS_REQUEST || message.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (message.text !== undefined) resolve(message.text);
        else reject(new Error(`the workers' metrics could not be gathered: ${message.error}`));
      };
      const timer = setTimeout(() => {
        process.off('message', onMessage);
        reject(new Error(`the workers' metrics were not gathered within ${GATHER_TIMEOUT_MS / 1000} s`));
      }, GATHER_TIMEOUT_MS);
      process.on('message', onMessage);
      process.send!({ type: METRICS_REQUEST, id } satisfies MetricsMessage);
    });
}

/** The metrics port's only resource, answered without Fastify: no request ids, logs or CORS to add. */
async function answerScrape(readMetrics: () => Promise<string>, contentType: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if ((request.url ?? '').split('?')[0] !== METRICS_PATH) {
    writeProblem(response, { title: 'Not Found', status: 404, detail: `This port serves ${METRICS_PATH} only.` });
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    writeProblem(response, { title: 'Method Not Allowed', status: 405, detail: `${METRICS_PATH} answers ${METRICS_METHODS}.` }, { allow: METRICS_METHODS });
    return;
  }
  const body = await readMetrics();
  response.writeHead(200, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(request.method === 'HEAD' ? undefined : body);
}

function listen(server: Server, { port, host }: MetricsListener): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * `/metrics` in Prometheus text format (prom-client): requests and their durations per route and
 * status, the dataset served, the response cache, and the process (memory, event loop, GC). Routes
 * are labelled by their pattern (`/api/hsds/v3/organizations/:id`), and anything unrouted as
 * `unmatched`, so no request can add a series.
 *
 * It tells the Node version and the memory in use, so it is never offered to browsers of other
 * origins (no CORS) and, given a listener, is served on that port only (a private interface by
 * default), not the public one. The app's own requests are counted either way.
 */
export default fp<MetricsOptions>(
  async (app, { stores, listener }) => {
    const registry = new Registry();
    const readMetrics = metricsReader(registry);
    collectDefaultMetrics({ register: registry });
    const requestMetrics = new RequestMetrics();
    // prom-client takes any object that reads out as a metric; its types name only its own classes.
    for (const metric of requestMetrics.metrics()) registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
    const cacheCounter = (name: string, help: string, read: (cache: { hits: number; misses: number }) => number) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          if (app.responseCache !== undefined) this.inc(read(app.responseCache));
        },
      });
    cacheCounter('hsds_response_cache_hits_total', 'Responses sent from the in-process response cache', (cache) => cache.hits);
    cacheCounter('hsds_response_cache_misses_total', 'Cacheable requests the response cache did not hold', (cache) => cache.misses);
    new Gauge({
      name: 'hsds_response_cache_bytes',
      help: 'Bytes held by the response cache',
      registers: [registry],
      collect() {
        this.set(app.responseCache?.size.bytes ?? 0);
      },
    });
    // Read by each dataset gauge as it is collected (prom-client collects them all at once).
    const dataset = { version: '', publishedAt: 0, organizations: 0 };
    const readDataset = async () => {
      const lease = stores.acquire();
      try {
        const info = await lease.store.info();
        Object.assign(dataset, { version: info.version, publishedAt: Date.parse(info.publishedAt) / 1000, organizations: info.organizations });
      } catch {
        Object.assign(dataset, { version: '', publishedAt: 0, organizations: 0 });
      } finally {
        lease.release();
      }
    };
    new Gauge({
      name: 'hsds_dataset_info',
      help: 'The dataset served (1, labelled with its version; none while no dataset is loaded)',
      labelNames: ['version'],
      registers: [registry],
      // Under `serve --workers`, every worker serves the dataset: one of them says so for all (counters and the cache bytes are summed).
      aggregator: 'max',
      async collect() {
        await readDataset();
        this.reset();
        if (dataset.version !== '') this.set({ version: dataset.version }, 1);
      },
    });
    const datasetGauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        aggregator: 'max',
        async collect() {
          await readDataset();
          this.set(read());
        },
      });
    new Gauge({
      name: 'hsds_dataset_damaged',
      help: 'Whether the dataset served was found damaged after it was opened (1: a read met altered bytes; every request is answered 503 until a good snapshot is served)',
      registers: [registry],
      aggregator: 'max',
      async collect() {
        this.set((await stores.readiness()).damaged === true ? 1 : 0);
      },
    });
    datasetGauge('hsds_dataset_published_timestamp_seconds', 'When the dataset served was published', () => dataset.publishedAt);
    datasetGauge('hsds_dataset_organizations', 'Published organizations in the dataset served', () => dataset.organizations);

    const record = (method: string, route: string, status: number, seconds: number) => requestMetrics.record(method, route, status, seconds);
    app.decorate('recordResponse', record);
    // A callback hook: Fastify runs it without making and awaiting a promise per response.
    app.addHook('onResponse', (request, reply, done) => {
      record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });

    if (listener === undefined) {
      app.get(METRICS_PATH, { schema: { hide: true }, config: { cors: false, cache: false } }, async (_request, reply) =>
        reply.header('cache-control', 'no-store').type(registry.contentType).send(await readMetrics()),
      );
      // A route of its own, so no CORS preflight is answered for it either.
      app.options(METRICS_PATH, { schema: { hide: true }, config: { cors: false } }, async (_request, reply) => reply.code(204).send());
      return;
    }
    const server = createLimitedServer((request, response) => {
      answerScrape(readMetrics, registry.contentType, request, response).catch((error: unknown) => {
        app.log.error({ err: error }, 'metrics scrape failed');
        if (!response.headersSent) writeProblem(response, { title: 'Internal Server Error', status: 500, detail: 'The metrics could not be read.' });
        else response.destroy();
      });
    });
    server.on('clientError', clientErrorHandler);
    app.decorate('metricsServer', server);
    app.addHook('onReady', async () => {
      await listen(server, listener);
      const { address, port } = server.address() as { address: string; port: number };
      app.log.info(`metrics served at http://${address.includes(':') ? `[${address}]` : address}:${port}${METRICS_PATH}`);
    });
    app.addHook('onClose', async () => {
      if (!server.listening) return;
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    });
  },
  { name: 'metrics' },
);
