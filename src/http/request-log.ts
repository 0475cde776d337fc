import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';

/** The header a request id comes in (from a proxy or client) and goes back out in. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * An id a caller may give, kept only when it is short and plain: it goes into every log line of the
 * request, so it must not carry line breaks, quotes or arbitrary length.
 */
const ACCEPTED = /^[\w.:@-]{1,128}$/;

/** The id of a request: the caller's X-Request-Id when acceptable, else a new UUID. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTED.test(given) ? given : randomUUID();
}

/**
 * The access log: one line per request at `info`, whichever path answered it: Fastify (through
 * OneLinePerRequest) or the caching component before Fastify (response-cache.ts). `reqId` is given
 * where the logger does not carry it already.
 */
export function logRequest(log: FastifyBaseLogger, method: string, url: string, statusCode: number, responseTimeMs: number, reqId?: string): void {
  const req = { method, url };
  const res = { statusCode };
  log.info(reqId === undefined ? { req, res, responseTime: responseTimeMs } : { reqId, req, res, responseTime: responseTimeMs }, 'request completed');
}

/** Fastify's request logging with one line per request (its own writes two: one as it comes, one when answered). */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
    else logRequest(request.log, request.method, request.url, reply.statusCode, reply.elapsedTime);
  }
}
