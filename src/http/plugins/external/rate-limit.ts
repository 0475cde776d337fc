import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { isOperationalTarget } from '../../routes/health.ts';

/** A client's error: Fastify's error handler turns it into a 429 problem (see problems.ts). */
class TooManyRequests extends Error {
  readonly statusCode = 429;
}

/**
 * An optional limit of requests per client (by request.ip: the address --trust-proxy makes of it) per
 * minute. Off by default: an edge cache in front answers most requests, and would otherwise be the
 * one "client" limited. Probes and metrics are never limited.
 */
export default fp<{ perMinute: number }>(
  async (app, { perMinute }) => {
    await app.register(rateLimit, {
      max: perMinute,
      timeWindow: 60_000,
      // Not per route: a route's own hooks run after the app's, so the response cache would answer
      // first and its hits would never be counted. One app-wide hook, here, counts every request.
      global: false,
      allowList: (request) => isOperationalTarget(request.url),
      errorResponseBuilder: (_request, context) =>
        new TooManyRequests(`This client sent more than ${context.max} requests in a minute. Try again in ${context.after}.`),
    });
    app.addHook('onRequest', app.rateLimit());
  },
  { name: 'rate-limit' },
);
