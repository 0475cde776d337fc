import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import links from './plugins/app/links.ts';
import problems, { frameworkError } from './plugins/app/problems.ts';
import caching from './plugins/app/caching.ts';
import responseHeaders from './plugins/app/response-headers.ts';
import { OneLinePerRequest, requestId } from './request-log.ts';
import { DEFAULT_MAX_EXPORTS, checkRequestLimits, clientErrorHandler, closeConnectionsAsTheyIdle, createLimitedServer } from './limits.ts';
import storePlugin from './plugins/app/store.ts';
import streams from './plugins/app/streams.ts';
import turns, { DEFAULT_TURN_BUDGET_MS } from './plugins/app/turns.ts';
import docs from './plugins/external/docs.ts';
import cors from './plugins/external/cors.ts';
import openapi from './plugins/external/openapi.ts';
import metrics from './plugins/app/metrics.ts';
import rateLimit from './plugins/external/rate-limit.ts';
import loadShedding from './plugins/external/load-shedding.ts';
import healthRoutes from './routes/health.ts';
import metaRoutes from './routes/meta.ts';
import profileRoutes from './routes/profile.ts';
import servicesRoutes from './routes/services.ts';
import organizationRoutes from './routes/organizations.ts';
import taxonomyRoutes from './routes/taxonomies.ts';
import taxonomyTermRoutes from './routes/taxonomy-terms.ts';
import changesRoutes from './routes/changes.ts';
import datapackageRoutes from './routes/datapackage.ts';
import pages from './pages/site.ts';
import { API_PREFIX, Page, Problem } from './schemas.ts';
import type { RootDetails } from './schemas.ts';
import type { StoreProvider } from '../store/store.ts';
import { fastifyTrustProxy } from './trust-proxy.ts';
import type { TrustProxy } from './trust-proxy.ts';
import type { MetricsListener } from './plugins/app/metrics.ts';
import type { LoadSheddingOptions } from './plugins/external/load-shedding.ts';

export interface AppOptions {
  stores: StoreProvider;
  publicBaseUrl?: string;
  trustProxy?: TrustProxy;
  /** Where /metrics is served apart from the API; unset: on the main port. */
  metrics?: MetricsListener;
  logLevel?: string;
  /** Seconds responses may be cached by clients and edges (Cache-Control max-age). */
  cacheMaxAge?: number;
  /** Bytes the in-process response cache may hold; 0 turns it off. */
  responseCacheBytes?: number;
  /** Requests per minute a client may send; 0 or unset: no limit. */
  rateLimitPerMinute?: number;
  /** Milliseconds a client may take to send its request head (tests shorten it). */
  headersTimeoutMs?: number;
  /** Milliseconds a response may make no progress before its connection is closed (tests shorten it). */
  idleTimeoutMs?: number;
  /** Exports (streamed lists) under way at once; more are answered 503. */
  maxExports?: number;
  /** What the root object says about the feed beyond HSDS's required fields (description, publisher...). */
  rootDetails?: RootDetails;
  /** Where the packages of /datapackage.zip are kept, one per dataset version; unset: a temporary folder, removed at close. */
  packagesDirectory?: string;
  /** When requests are shed; unset: never (serve sets it, see --max-event-loop-delay). */
  loadShedding?: LoadSheddingOptions;
}

export const DEFAULT_CACHE_MAX_AGE = 300;
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 2 ** 20;

/** Log lines are written in batches of about this many bytes, or after LOG_FLUSH_MS when fewer come. */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 1000;
let stdoutLog: ReturnType<typeof pino.destination> | undefined;

/**
 * Where the log goes: stdout, written synchronously, a batch of lines at a time. pino's default
 * writes asynchronously, one chunk of at most 16 KiB per turn of the event loop, and keeps the rest
 * in memory; under load the turns are long and few, so the log fell behind the requests without
 * bound (read through a pipe: 18 MiB written in 120 s while 110 MiB more waited in
 * the heap; bench/soak.ts). Written synchronously, the log holds at most one batch, and a reader that
 * stops holds the server back instead of filling its memory; batching spares most of the cost of a
 * write per line. One destination per process, as there is one stdout.
 */
function logDestination(): ReturnType<typeof pino.destination> {
  if (stdoutLog === undefined) {
    const destination = pino.destination({ dest: 1, sync: true, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS });
    // The last lines, however the process ends (close-with-grace ends it with process.exit).
    process.once('exit', () => {
      try {
        destination.flushSync();
      } catch {
        // stdout is gone: nowhere left to write them
      }
    });
    stdoutLog = destination;
  }
  return stdoutLog;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  // Made by the first package kept there (PackageArchives): an app that is never asked for one writes nothing.
  const packagesDirectory = options.packagesDirectory ?? join(tmpdir(), `hsds-packages-${randomUUID()}`);
  const trustProxy = fastifyTrustProxy(options.trustProxy ?? false);
  const app = Fastify({
    logger: { level: options.logLevel ?? 'info', stream: logDestination() },
    logController: new OneLinePerRequest(),
    trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkError,
    // Ids are checked before use (requestId in request-log.ts), so Fastify must not take the header as it is.
    requestIdHeader: false,
    genReqId: requestId,
    serverFactory: (handler) =>
      createLimitedServer(
        (request, response) => {
          // A hit the caching component answers never reaches Fastify.
          if (app.answerHit?.(request, response) !== true) handler(request, response);
        },
        { headersTimeoutMs: options.headersTimeoutMs, idleTimeoutMs: options.idleTimeoutMs },
      ),
    clientErrorHandler,
    // A request that arrives on a kept-alive connection while the server shuts down is answered as
    // usual (with Connection: close), not with Fastify's own 503, which is not a problem document.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  for (const schema of [Page, Problem]) app.addSchema(schema);
  // Route schemas document requests and responses (for OpenAPI); query.ts reads and checks every
  // parameter itself, so each 400 can name the parameter and say what it accepts. Path ids are looked
  // up as given. Responses are JSON rendered at publish time; documents made per request are few and
  // small, so no serializer is generated from the schemas (they name the profile's compiled schemas
  // by URL, which the generator could not resolve).
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.decorateRequest('parameters', null as unknown as Record<string, unknown>);
  // First: every response, even a framework error, carries its request id and nosniff.
  await app.register(responseHeaders);
  app.addHook('onRequest', checkRequestLimits);
  app.addHook('preClose', (done) => {
    closeConnectionsAsTheyIdle(app.server);
    done();
  });
  if ((options.rateLimitPerMinute ?? 0) > 0) await app.register(rateLimit, { perMinute: options.rateLimitPerMinute! });
  await app.register(openapi);
  await app.register(links, { publicBaseUrl: options.publicBaseUrl, proxyTrusted: trustProxy !== false });
  // Before problems: a CORS preflight is answered here, not as a plain OPTIONS.
  await app.register(cors);
  await app.register(problems);
  // After the problems plugin (a shed request is a problem) and before the store: shedding takes no lease.
  if (options.loadShedding !== undefined) await app.register(loadShedding, options.loadShedding);
  // Waiting for a turn, a request holds no lease yet.
  await app.register(turns, { budgetMs: DEFAULT_TURN_BUDGET_MS });
  await app.register(storePlugin, { stores: options.stores });
  await app.register(streams, { maxExports: options.maxExports ?? DEFAULT_MAX_EXPORTS });
  await app.register(caching, {
    maxAge: options.cacheMaxAge ?? DEFAULT_CACHE_MAX_AGE,
    responseCacheBytes: options.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES,
    renderedSettings: { rootDetails: options.rootDetails ?? {} },
    stores: options.stores,
    publicBaseUrl: options.publicBaseUrl,
    // Hits answered before Fastify take no X-Forwarded-* headers: not for their links' origin, nor to
    // key the rate limit on the client behind a proxy.
    hitsBeforeFastify: (options.publicBaseUrl !== undefined || trustProxy === false) && ((options.rateLimitPerMinute ?? 0) === 0 || trustProxy === false),
  });
  await app.register(docs, { publicBaseUrl: options.publicBaseUrl });

  await app.register(
    async (api) => {
      await api.register(metaRoutes, { rootDetails: options.rootDetails ?? {} });
      await api.register(profileRoutes);
      await api.register(servicesRoutes);
      await api.register(organizationRoutes);
      await api.register(taxonomyRoutes);
      await api.register(taxonomyTermRoutes);
      await api.register(changesRoutes);
      await api.register(datapackageRoutes, { stores: options.stores, directory: packagesDirectory });
    },
    { prefix: API_PREFIX },
  );
  await app.register(healthRoutes, { stores: options.stores });
  await app.register(metrics, { stores: options.stores, listener: options.metrics });
  // Pages for people at the API's paths without its prefix, the home page at the site root.
  await app.register(pages);
  if (options.packagesDirectory === undefined) app.addHook('onClose', async () => rmSync(packagesDirectory, { recursive: true, force: true }));
  return app;
}
