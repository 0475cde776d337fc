import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

export interface InvalidParam {
  name: string;
  reason: string;
}

export interface Problem {
  /** A fragment of the profile document naming this kind of problem, or undefined for `about:blank`. */
  kind?: 'invalid-parameter' | 'version-not-kept';
  title: string;
  status: number;
  detail: string;
  invalidParams?: InvalidParam[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** The methods this read-only API answers, everywhere (any other is a 405). */
export const READ_METHODS = 'GET, HEAD, OPTIONS';

/** A request parameter the caller got wrong: answered as a 400 problem naming it. */
export class ParameterError extends Error {
  readonly parameter: string;
  readonly reason: string;

  constructor(parameter: string, reason: string) {
    super(`${parameter} ${reason}`);
    this.parameter = parameter;
    this.reason = reason;
  }
}

/**
 * The server cannot take this request now (too many exports under way, or its event loop lagging):
 * answered as a 503 problem with Retry-After, never cached.
 */
export class ServiceBusy extends Error {
  readonly retryAfterSeconds: number;

  constructor(detail: string, retryAfterSeconds: number) {
    super(detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * This client has as much under way as one client may (its share of the exports): answered as a 429
 * problem with Retry-After, never cached.
 */
export class ClientBusy extends Error {
  readonly retryAfterSeconds: number;

  constructor(detail: string, retryAfterSeconds: number) {
    super(detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export function problemBody(problem: Problem, profileUrl: string): string {
  return JSON.stringify({
    type: problem.kind === undefined ? 'about:blank' : `${profileUrl}#${problem.kind}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    ...(problem.invalidParams === undefined ? {} : { invalid_params: problem.invalidParams }),
  });
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(problem, reply.request.apiUrl('/profile')));
}

export const notFound = (reply: FastifyReply, detail: string): FastifyReply => sendProblem(reply, { title: 'Not Found', status: 404, detail });

/**
 * Answers with a problem where no Fastify reply exists (the metrics port's server, or an answer Node
 * asks the application for, like a failed expectation): never cached, never sniffed.
 */
export function writeProblem(response: ServerResponse, problem: Problem, headers: Record<string, string> = {}): void {
  const body = problemBody(problem, '');
  response.writeHead(problem.status, {
    ...headers,
    'content-type': PROBLEM_CONTENT_TYPE,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}
