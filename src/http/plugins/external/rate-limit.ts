import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
// The plugin's own in-memory store, kept here so that hits answered before Fastify count in it too.
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import { isOperationalTarget } from '../../operational.ts';

/** A client's error: Fastify's error handler turns it into a 429 problem (see problems.ts). */
class TooManyRequests extends Error {
  readonly statusCode = 429;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Counts a request answered before Fastify (see answerHit) as the rate limit's hook would, keyed on
     * the connection's address: the headers the hook would add, or undefined when the client is over
     * the limit (the request then goes through Fastify, which answers the 429).
     */
    countBeforeFastify?: (request: IncomingMessage) => Record<string, number> | undefined;
  }
}

const WINDOW_MS = 60_000;

/**
 * An optional limit of requests per client (by request.ip: the address --trust-proxy makes of it) per
 * minute. Off by default: an edge cache in front answers most requests, and would otherwise be the
 * one "client" limited. Probes and metrics are never limited.
 */
export default fp<{ perMinute: number }>(
  async (app, { perMinute }) => {
    let store: FastifyRateLimitStore | undefined;
    await app.register(rateLimit, {
      max: perMinute,
      timeWindow: WINDOW_MS,
      // The plugin makes its store from this class, and the same store counts hits answered before
      // Fastify. Made as the plugin's default would be here: neither continueExceeding nor
      // exponentialBackoff is set, so a window ends a minute after it began.
      store: class {
        constructor() {
          store = new LocalStore(false, false);
          return store;
        }
      } as never,
      // Not per route: a route's own hooks run after the app's, so the response cache would answer
      // first and its hits would never be counted. One app-wide hook, here, counts every request.
      global: false,
      allowList: (request) => isOperationalTarget(request.url),
      errorResponseBuilder: (_request, context) =>
        new TooManyRequests(`This client sent more than ${context.max} requests in a minute. Try again in ${context.after}.`),
    });
    app.addHook('onRequest', app.rateLimit());
    app.decorate('countBeforeFastify', (request: IncomingMessage) => {
      let count: { current: number; ttl: number } | undefined;
      // The local store answers at once; its callback never waits.
      store!.incr(normalizeIP(request.socket.remoteAddress ?? ''), (_error, counted) => (count = counted), WINDOW_MS, perMinute);
      if (count === undefined || count.current > perMinute) return undefined;
      return { 'x-ratelimit-limit': perMinute, 'x-ratelimit-remaining': perMinute - count.current, 'x-ratelimit-reset': Math.ceil(count.ttl / 1000) };
    });
  },
  { name: 'rate-limit' },
);
