import fp from 'fastify-plugin';
import type { Store, StoreProvider } from '../../../store/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The dataset this request is answered from, fixed for its whole life (see StoreProvider). */
    store: Store;
  }
}

/** Leases a store to each request and releases it when the response is done or the client has gone. */
export default fp<{ stores: StoreProvider }>(
  async (app, { stores }) => {
    app.decorateRequest('store', null as unknown as Store);
    app.addHook('onRequest', async (request, reply) => {
      const lease = stores.acquire();
      request.store = lease.store;
      reply.raw.once('close', lease.release);
      reply.raw.once('finish', lease.release);
    });
    app.addHook('onClose', async () => stores.close());
  },
  { name: 'store' },
);
