import type { FastifyPluginAsync } from 'fastify';
import type { StoreProvider } from '../../store/store.ts';

const healthRoutes: FastifyPluginAsync<{ stores: StoreProvider }> = async (app, { stores }) => {
  // Alive: the process answers. Says nothing of the store, so a database outage restarts nothing.
  app.get('/healthz', { schema: { hide: true }, config: { cache: false } }, async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  // Ready: a dataset is loaded and its store answers; a load balancer sends requests elsewhere until then.
  app.get('/readyz', { schema: { hide: true }, config: { cache: false } }, async (_request, reply) => {
    const readiness = await stores.readiness();
    reply.code(readiness.ready ? 200 : 503).header('cache-control', 'no-store');
    if (!readiness.ready) return { status: 'not ready', reason: readiness.reason };
    return readiness.warning === undefined ? { status: 'ready', dataset_version: readiness.version } : { status: 'ready', dataset_version: readiness.version, warning: readiness.warning };
  });
};

export default healthRoutes;
