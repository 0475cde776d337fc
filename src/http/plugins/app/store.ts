import fp from 'fastify-plugin';
import type { Store } from '../../../store/store.ts';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
  }
}

/** Makes the dataset store available to routes and closes it with the server. */
export default fp<{ store: Store }>(
  async (app, { store }) => {
    app.decorate('store', store);
    app.addHook('onClose', async () => store.close());
  },
  { name: 'store' },
);
