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

/**
 * What a browser tells the sites a page links to (organizations' own websites) about the page: nothing.
 * A page's address holds what a person looked for (`/organizations?search=…`, the organization they
 * opened), and even the origin alone tells a site that its visitor came from a directory of social
 * services. This server reads no Referer itself, so same-origin links lose nothing.
 */
const PAGE_REFERRER_POLICY = 'no-referrer';

export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => setResponseHeaders(request, reply));
    // On send, whichever route made the page; the response cache keeps it with the page (see response-cache.ts).
    app.addHook('onSend', async (_request, reply, payload) => {
      if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) reply.header('referrer-policy', PAGE_REFERRER_POLICY);
      return payload;
    });
  },
  { name: 'response-headers' },
);
