import { STATUS_CODES } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, ParameterError, problemBody, sendProblem } from '../../problem.ts';
import type { InvalidParam } from '../../problem.ts';
import { PAGING_RULES } from '../../schemas.ts';

/**
 * Every error leaves as an RFC 9457 problem+json body. Only our own wording reaches a client: an
 * unexpected error is logged and answered with a generic 500, never its message or stack.
 */

export const READ_METHODS = 'GET, HEAD, OPTIONS';

function invalidParams(error: FastifyError): InvalidParam[] {
  return (error.validation ?? []).map((issue) => {
    const name = issue.instancePath.replace(/^\//, '') || String((issue.params as { missingProperty?: string }).missingProperty ?? 'query');
    return { name, reason: PAGING_RULES[name] ?? issue.message ?? 'is not valid' };
  });
}

function badParameters(reply: FastifyReply, params: InvalidParam[]): FastifyReply {
  return sendProblem(reply, {
    kind: 'invalid-parameter',
    title: 'Invalid query parameter',
    status: 400,
    detail: params.map((param) => `${param.name} ${param.reason}`).join('; '),
    invalidParams: params,
  });
}

/**
 * For errors Fastify raises before routing (a URL that does not decode, an over-long path parameter).
 * Its request object there lacks our decorators, so only about:blank problems are possible.
 */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode ?? 400;
  reply
    .code(status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody({ title: STATUS_CODES[status] ?? 'Bad Request', status, detail: error.message }, ''));
}

export const notFound = (reply: FastifyReply, detail: string): FastifyReply =>
  sendProblem(reply, { title: 'Not Found', status: 404, detail });

export default fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (error instanceof ParameterError) return badParameters(reply, [{ name: error.parameter, reason: error.reason }]);
      if (error.validation !== undefined) return badParameters(reply, invalidParams(error));
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        // Fastify's own client errors (bad URL encoding, media type, ...) carry safe messages.
        return sendProblem(reply, { title: STATUS_CODES[status] ?? 'Client Error', status, detail: error.message });
      }
      request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, { title: 'Internal Server Error', status: 500, detail: 'The server could not answer this request.' });
    });

    app.setNotFoundHandler((request, reply) => {
      if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS') {
        reply.header('allow', READ_METHODS);
        return sendProblem(reply, {
          title: 'Method Not Allowed',
          status: 405,
          detail: `This API is read-only: it answers ${READ_METHODS}, not ${request.method}.`,
        });
      }
      return notFound(reply, 'No resource at this path. The API root lists the available ones.');
    });

    // A read-only API allows the same methods everywhere; CORS preflights land here too.
    app.options('*', { schema: { hide: true } }, async (_request, reply) => reply.header('allow', READ_METHODS).code(204).send());
  },
  { name: 'problems', dependencies: ['links'] },
);
