import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from '../../request-log.ts';

/**
 * Headers on every response, whatever answers it (a route, the response cache, a 304, an error):
 * the request id, for matching a response to its log lines, and `nosniff`, so that no browser reads
 * a JSON body as anything else.
 */
export function setResponseHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, request.id);
  reply.header('x-content-type-options', 'nosniff');
}

export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => setResponseHeaders(request, reply));
  },
  { name: 'response-headers' },
);
