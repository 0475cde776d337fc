import fp from 'fastify-plugin';
import type { Store, StoreProvider } from '../../../store/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The dataset this request is answered from, fixed for its whole life (see StoreProvider). */
    store: Store;
    /**
     * Keeps `store` past the end of the handler, for a body that reads it as it is sent (a stream):
     * call the returned function when that body is done.
     */
    holdStore(): () => void;
  }
}

/**
 * Leases a store to each request and releases it when the response is over (sent, or the client
 * gone) and every hold on it has ended.
 */
export default fp<{ stores: StoreProvider }>(
  async (app, { stores }) => {
    app.decorateRequest('store', null as unknown as Store);
    app.decorateRequest('holdStore', null as unknown as () => () => void);
    app.addHook('onRequest', async (request, reply) => {
      const lease = stores.acquire();
      request.store = lease.store;
      let holds = 1;
      const hold = () => {
        let ended = false;
        return () => {
          if (ended) return;
          ended = true;
          if (--holds === 0) lease.release();
        };
      };
      request.holdStore = () => {
        holds++;
        return hold();
      };
      const responseOver = hold();
      reply.raw.once('close', responseOver);
      reply.raw.once('finish', responseOver);
    });
    app.addHook('onClose', async () => stores.close());
  },
  { name: 'store' },
);
