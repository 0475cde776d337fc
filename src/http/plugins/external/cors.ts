import fp from 'fastify-plugin';
import cors from '@fastify/cors';
import { READ_METHODS } from '../../problem.ts';

/** Exposed to scripts of other origins: the validators a client needs for revalidation, and more. */
const EXPOSED_HEADERS = ['ETag', 'Last-Modified', 'Link', 'Location', 'X-Request-Id'];

/** What the plugin adds to the answer of any request of a route with CORS (see answerHit in response-cache.ts). */
export const CORS_RESPONSE_HEADERS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS.join(', ') } as const;

/**
 * A public, read-only API without credentials: any origin may read it from a browser. Every OPTIONS
 * is answered here, as a preflight (which browsers may cache for a day) and with `Allow`; the
 * validators a client needs for revalidation are exposed.
 */
export default fp(
  async (app) => {
    await app.register(cors, {
      origin: '*',
      credentials: false,
      methods: READ_METHODS,
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 86_400,
      hook: 'onRequest',
      strictPreflight: false,
    });
    app.addHook('onSend', async (request, reply, payload) => {
      if (request.method === 'OPTIONS') reply.header('allow', READ_METHODS);
      return payload;
    });
  },
  { name: 'cors' },
);
