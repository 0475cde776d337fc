import { STATUS_CODES } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ClientBusy, PROBLEM_CONTENT_TYPE, ParameterError, READ_METHODS, ServiceBusy, notFound, problemBody, sendProblem } from '../../problem.ts';
import type { InvalidParam } from '../../problem.ts';
import { StoreUnavailable } from '../../../store/store.ts';
import { setResponseHeaders } from './response-headers.ts';
import { tooLongTarget } from '../../limits.ts';

/**
 * Every error leaves as an RFC 9457 problem+json body. Only our own wording reaches a client: an
 * unexpected error is logged and answered with a generic 500, never its message or stack.
 */

/** What a 503 asks clients to wait: the store reconnects by itself within about a second. */
const RETRY_AFTER_SECONDS = 1;

function badParameters(reply: FastifyReply, params: InvalidParam[]): FastifyReply {
  return sendProblem(reply, {
    kind: 'invalid-parameter',
    title: 'Invalid query parameter',
    status: 400,
    detail: params.map((param) => `${param.name} ${param.reason}`).join('; '),
    invalidParams: params,
  });
}

const NO_RESOURCE = 'No resource at this path. The API root lists the available ones.';

/**
 * For paths Fastify rejects before routing: one that does not percent-decode, or a path parameter
 * longer than the router allows. No resource can live there, so they are 404s like any unknown path,
 * unless the whole target is over the length limit (414, as for any other path).
 * The request object here lacks our decorators, so the problem type is about:blank.
 */
export function frameworkError(_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No hook has run for such a request: the headers every response carries are set here.
  setResponseHeaders(request, reply);
  const problem = tooLongTarget(request.url) ?? { title: 'Not Found', status: 404, detail: NO_RESOURCE };
  reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).header('cache-control', 'no-store').send(problemBody(problem, ''));
}

export default fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (error instanceof ParameterError) return badParameters(reply, [{ name: error.parameter, reason: error.reason }]);
      if (error instanceof StoreUnavailable) {
        // Expected while the database is away: one line, no stack.
        request.log.warn({ reason: error.message, cause: (error.cause as Error | undefined)?.message }, 'store unavailable');
        reply.header('retry-after', String(RETRY_AFTER_SECONDS));
        return sendProblem(reply, { title: 'Service Unavailable', status: 503, detail: 'The dataset cannot be read right now. Try again in a moment.' });
      }
      if (error instanceof ServiceBusy) {
        reply.header('retry-after', String(error.retryAfterSeconds));
        return sendProblem(reply, { title: 'Service Unavailable', status: 503, detail: error.message });
      }
      if (error instanceof ClientBusy) {
        reply.header('retry-after', String(error.retryAfterSeconds));
        return sendProblem(reply, { title: 'Too Many Requests', status: 429, detail: error.message });
      }
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        // Fastify's own client errors carry safe messages.
        return sendProblem(reply, { title: STATUS_CODES[status] ?? 'Client Error', status, detail: error.message });
      }
      request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, { title: 'Internal Server Error', status: 500, detail: 'The server could not answer this request.' });
    });

    // Methods are settled before any body is read: a read-only API allows the same ones everywhere.
    // (OPTIONS is answered by the cors plugin, registered before this one.)
    app.addHook('onRequest', async (request, reply) => {
      if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
      reply.header('allow', READ_METHODS);
      return sendProblem(reply, {
        title: 'Method Not Allowed',
        status: 405,
        detail: `This API is read-only: it answers ${READ_METHODS}, not ${request.method}.`,
      });
    });

    app.setNotFoundHandler((_request, reply) => notFound(reply, NO_RESOURCE));
  },
  { name: 'problems', dependencies: ['links'] },
);
