import { createServer, STATUS_CODES } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterResponsesUnderWay, trackConnections } from './connections.ts';
import { PROBLEM_CONTENT_TYPE, READ_METHODS, problemBody, sendProblem, writeProblem } from './problem.ts';
import type { Problem } from './problem.ts';

/**
 * Limits on what a request may be, each answered with a problem (see docs/operations.md, "Limits"). The server
 * reads nothing it does not need: no request has a body, and no URL is longer than any link here.
 */

/** Longest request target (path and query) served; longer ones get a 414. */
export const MAX_URL_LENGTH = 4096;
/** Largest request head (request line and headers): Node's own limit (--max-http-header-size), answered with a 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Longest a client may take to send its request head. */
export const HEADERS_TIMEOUT_MS = 10_000;

/** The answer to a request target over MAX_URL_LENGTH, whoever sees it first (a hook, or the router's own checks). */
export const tooLongTarget = (url: string): Problem | undefined =>
  url.length > MAX_URL_LENGTH ? { title: 'URI Too Long', status: 414, detail: `Request targets are at most ${MAX_URL_LENGTH} characters.` } : undefined;

/**
 * Longest a response may make no progress: no byte taken by the client (or, before the first, none
 * to send) for this long, and the connection is closed, ending the response and freeing what it
 * holds (an export's slot and dataset). nginx's send_timeout is the same 60 s. See connections.ts.
 */
export const IDLE_TIMEOUT_MS = 60_000;

/** Exports (streamed lists) under way at once, by default; more are answered 503 (see streams.ts). */
export const DEFAULT_MAX_EXPORTS = 8;

/**
 * Mean event-loop delay (ms, over each second) past which requests are shed, by default (see
 * load-shedding.ts). Under the 256-connection mixed load of bench:faults the largest mean of a
 * second was 32 ms (docs/operations.md, "Limits"); past 500 ms every request, probes included, waits about that
 * long for its turn, half of a 1 s liveness probe's timeout.
 */
export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 500;

export interface ServerClocks {
  /** Milliseconds a client may take to send its request head (tests shorten it). */
  headersTimeoutMs?: number;
  /** Milliseconds a response may make no progress (tests shorten it). */
  idleTimeoutMs?: number;
}

/**
 * The server's other clocks: the whole request within 30 s; an idle keep-alive connection kept 72 s
 * (longer than the 60 s load balancers commonly keep theirs, so the server never closes one under
 * them); slow clients looked for every second (Node's default is 30 s). The idle time applies while
 * a response is under way (trackConnections), the keep-alive time between requests.
 */
export function createLimitedServer(handler: RequestListener, clocks: ServerClocks = {}): Server {
  // A missing Host is answered by checkRequestLimits, as a problem, rather than by Node's bare 400.
  const server = createServer(
    { headersTimeout: clocks.headersTimeoutMs ?? HEADERS_TIMEOUT_MS, requestTimeout: 30_000, connectionsCheckingInterval: 1000, requireHostHeader: false },
    trackConnections(handler, clocks.idleTimeoutMs ?? IDLE_TIMEOUT_MS),
  );
  server.keepAliveTimeout = 72_000;
  // What Node would otherwise answer itself, without a body: an Expect it cannot meet, and CONNECT.
  server.on('checkExpectation', (_request, response: ServerResponse) =>
    writeProblem(response, { title: 'Expectation Failed', status: 417, detail: 'This server meets no expectation but 100-continue.' }, { connection: 'close' }),
  );
  server.on('connect', (request: IncomingMessage, socket: Duplex) =>
    endWithProblem(socket, 405, `This API is read-only: it answers ${READ_METHODS}, not ${request.method}.`, [`Allow: ${READ_METHODS}`]),
  );
  return server;
}

/** How often a closing server looks for connections that have become idle. */
const CLOSING_SWEEP_MS = 100;

/**
 * Once a server stops listening, closes each kept-alive connection as soon as its response under way
 * ends. Node closes only those idle at that moment; the others would stay open, idle, for the whole
 * keep-alive time, and the shutdown would wait for them.
 */
export function closeConnectionsAsTheyIdle(server: Server): void {
  if (!server.listening) return;
  const sweep = setInterval(() => server.closeIdleConnections(), CLOSING_SWEEP_MS);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host, and any request with more than one, is answered
 * 400. (Node keeps the first of several Host headers and drops the others without a word.)
 */
export function hostProblem(request: IncomingMessage): Problem | undefined {
  if (request.headers.host === undefined) {
    return request.httpVersion === '1.1' ? { title: 'Bad Request', status: 400, detail: 'HTTP/1.1 requests must name the host they are for (the Host header).' } : undefined;
  }
  let hosts = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index]!.toLowerCase() === 'host' && ++hosts > 1) {
      return { title: 'Bad Request', status: 400, detail: 'A request names its host in one Host header, not more.' };
    }
  }
  return undefined;
}

/** An onRequest hook: a URL too long, a Host missing or repeated, or a body on a GET or HEAD, ends the request here. */
export async function checkRequestLimits(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const problem = tooLongTarget(request.url) ?? hostProblem(request.raw);
  if (problem !== undefined) return sendProblem(reply, problem);
  // Other methods are refused (405) or answered (OPTIONS) without reading a body at all.
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  const length = request.headers['content-length'];
  const hasBody = request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (hasBody) {
    reply.header('connection', 'close');
    return sendProblem(reply, { title: 'Bad Request', status: 400, detail: 'This API reads no request body: give parameters in the query string.' });
  }
  return undefined;
}

const CLIENT_ERRORS: Record<string, { status: number; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: `Request heads (request line and headers) are at most ${MAX_HEADER_BYTES} bytes.` },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time.' },
};

/**
 * Answers what Node's parser rejects before any route sees it (a head too large or too slow,
 * malformed HTTP) with a problem, and closes the connection. Never more than a line of our own words.
 * Requests pipelined before it on the connection are answered first: their answers are still being
 * made when the parser reaches the bad one.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, detail } = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, detail: 'The request is not valid HTTP.' };
  afterResponsesUnderWay(socket, () => {
    if (socket.writable) endWithProblem(socket, status, detail);
    else socket.destroy();
  });
}

/** Writes a whole problem response on a connection no HTTP response object serves, and closes it. */
function endWithProblem(socket: Duplex, status: number, detail: string, headers: string[] = []): void {
  const body = problemBody({ title: STATUS_CODES[status]!, status, detail }, '');
  socket.end(
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store',
      'X-Content-Type-Options: nosniff',
      ...headers,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
