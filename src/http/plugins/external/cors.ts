import fp from 'fastify-plugin';
import cors from '@fastify/cors';
import { READ_METHODS } from '../../problem.ts';

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
      exposedHeaders: ['ETag', 'Last-Modified', 'Location', 'X-Request-Id'],
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
