import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

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
