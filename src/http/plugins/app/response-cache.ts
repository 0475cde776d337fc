import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { ContentCoding } from '../../encoding.ts';
import { normalisedTarget, ResponseCache, Scopes } from '../../cached-responses.ts';
import type { CachedResponse, HitAnswer } from '../../cached-responses.ts';
import { hostProblem, tooLongTarget } from '../../limits.ts';
import { logRequest, REQUEST_ID_HEADER, requestId } from '../../request-log.ts';
import type { StoreProvider } from '../../../store/store.ts';
import { CORS_RESPONSE_HEADERS } from '../external/cors.ts';
import { clientHolds, codingFor, knownDataset, sendNotModified } from './http-caching.ts';
import { originOf } from './links.ts';

/** Headers a route may set that describe its representation, kept with it (a page's policy, a list's links). */
const REPRESENTATION_HEADERS = ['content-security-policy', 'referrer-policy', 'content-language', 'content-disposition', 'link'] as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** Where this request's response is to be kept, when it may be (see ResponseCache). */
    responseCacheKey?: { scope: string; target: string };
  }
  interface FastifyInstance {
    responseCache?: ResponseCache;
    /**
     * Answers a request from the response cache before Fastify sees it, when it can (see answerHit);
     * false when the request is to go through Fastify.
     */
    answerHit?: (request: IncomingMessage, response: ServerResponse) => boolean;
    /** Counts a response in /metrics (see metrics.ts), for responses sent outside Fastify. */
    recordResponse?: (method: string, route: string, status: number, seconds: number) => void;
  }
}

/** What a hit adds to its head when the rate limit is off. */
const NO_HEADERS: Record<string, number> = {};

/**
 * A kept response's answer before Fastify in one coding, with the headers the app's plugins set on
 * Fastify's path: the request id (set per request), nosniff and CORS, and those of http-caching and
 * compression (RFC 9110: a 304 carries the 200's validators, Cache-Control and Vary).
 */
function makeHitAnswer(entry: CachedResponse, coding: ContentCoding, validators: { etag: string; lastModified: string }, cacheControl: string, cache: ResponseCache): HitAnswer {
  const { body, added } = entry.body(coding);
  const { etag, lastModified } = validators;
  const notModified = {
    [REQUEST_ID_HEADER]: '',
    'x-content-type-options': 'nosniff',
    ...CORS_RESPONSE_HEADERS,
    vary: 'Accept-Encoding',
    'cache-control': cacheControl,
    etag,
    'last-modified': lastModified,
  };
  const ok = {
    ...notModified,
    'content-type': entry.contentType,
    ...entry.headers,
    ...(coding === 'identity' ? {} : { 'content-encoding': coding }),
    'content-length': body.length,
  };
  const answer = { etag, lastModified, body, ok, notModified };
  cache.grew(added + entry.keepHitAnswer(coding, answer));
  return answer;
}

export interface ResponseCacheOptions {
  /** Bytes of bodies (all codings) the cache may hold; 0 turns it off. */
  maxBytes: number;
  /** Cache-Control of a kept response. */
  cacheControl: string;
  /** Where requests get their dataset; set when hits may be answered before Fastify (see answerHit). */
  hitsBeforeFastify?: { stores: StoreProvider; publicBaseUrl: string | undefined };
}

export default fp<ResponseCacheOptions>(
  async (app, { maxBytes, cacheControl, hitsBeforeFastify }) => {
    if (maxBytes <= 0) return;
    const cache = new ResponseCache(maxBytes);
    const scopes = new Scopes();
    app.decorate('responseCache', cache);

    app.addHook('onRequest', async (request: FastifyRequest, reply) => {
      const cacheable = request.cacheable;
      if (cacheable === undefined) return;
      const scope = scopes.of(cacheable.version, cacheable.origin, cacheable.representation);
      const target = normalisedTarget(request.url);
      const entry = cache.get(scope, target);
      if (entry === undefined) {
        request.responseCacheKey = { scope, target };
        return;
      }
      // Held here, the answer is a 200: one the client holds already is a 304, at once.
      if (cacheable.notModified) return sendNotModified(reply);
      const coding = request.contentCoding();
      const { body, added } = entry.body(coding);
      if (added > 0) cache.grew(added);
      if (coding !== 'identity') reply.header('content-encoding', coding);
      return reply.code(200).type(entry.contentType).headers(entry.headers).send(body);
    });

    app.addHook('onSend', async (request, reply, payload) => {
      const key = request.responseCacheKey;
      if (key === undefined || reply.statusCode !== 200 || reply.hasHeader('content-encoding')) return payload;
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
      const { publishedAt } = request.cacheable!;
      const identity = typeof payload === 'string' ? Buffer.from(payload) : payload;
      const headers: Record<string, string> = {};
      for (const name of REPRESENTATION_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const entry = cache.add(key.scope, key.target, publishedAt, String(reply.getHeader('content-type')), identity, request.routeOptions.url!, headers);
      if (entry === undefined) return payload;
      const coding = request.contentCoding();
      if (coding === 'identity') return identity;
      const { body, added } = entry.body(coding);
      cache.grew(added);
      reply.header('content-encoding', coding);
      return body;
    });

    if (hitsBeforeFastify === undefined) return;
    const { stores, publicBaseUrl } = hitsBeforeFastify;
    const configuredOrigin = publicBaseUrl === undefined ? undefined : new URL(publicBaseUrl).origin;
    let closing = false;
    app.addHook('preClose', (done) => {
      closing = true;
      done();
    });

    /**
     * A hit answered as the hooks above and the app's other plugins would answer it (the same status,
     * headers and body; test/http/hits-before-fastify.test.ts compares the two), without Fastify's
     * routing, hooks and reply objects, which cost most of a hit's time. Only a GET or HEAD of a
     * response kept for one form (not the profile, which varies by Accept) from a dataset a request
     * has read already, and only while the server is not closing; anything else (a miss, a request
     * Fastify would refuse) goes through Fastify. Hits take no turn (turns.ts) and are never shed:
     * they cost next to nothing. Counted in /metrics and logged like any request.
     */
    app.decorate('answerHit', (request: IncomingMessage, response: ServerResponse): boolean => {
      const method = request.method;
      if ((method !== 'GET' && method !== 'HEAD') || closing) return false;
      const started = performance.now();
      const url = request.url!;
      const headers = request.headers;
      if (tooLongTarget(url) !== undefined || headers.host === undefined || hostProblem(request) !== undefined || headers['transfer-encoding'] !== undefined) return false;
      if (headers['content-length'] !== undefined && headers['content-length'] !== '0') return false;
      const lease = stores.acquire();
      const dataset = knownDataset(lease.store);
      lease.release();
      if (dataset === undefined) return false;
      // This server speaks plain HTTP (TLS ends at a proxy), and takes no X-Forwarded-* here (see its options).
      const origin = configuredOrigin ?? originOf('http', headers.host);
      const entry = cache.get(scopes.of(dataset.version, origin, ''), normalisedTarget(url), false);
      if (entry === undefined) return false;
      // Counted where Fastify's rate-limit hook would count it; a client over the limit gets its 429 there.
      const rateLimit = app.countBeforeFastify === undefined ? NO_HEADERS : app.countBeforeFastify(request);
      if (rateLimit === undefined) return false;
      const coding = codingFor(headers, true);
      const answer = entry.hitAnswers[coding] ?? makeHitAnswer(entry, coding, app.validators.of(dataset.version, dataset.publishedAt, origin, coding), cacheControl, cache);
      const status = clientHolds(headers, answer.etag, answer.lastModified) ? 304 : 200;
      const made = status === 304 ? answer.notModified : answer.ok;
      // node:http writes out a head given only to writeHead at once and keeps no reference to it, so
      // one object serves every hit; with the rate limit on, the client's count is added to a copy.
      const head = rateLimit === NO_HEADERS ? made : { ...made, ...rateLimit };
      const id = requestId(request);
      head[REQUEST_ID_HEADER] = id;
      // Read to its end now (it has no body): else Node dumps it once the response has finished.
      request.resume();
      response.writeHead(status, head);
      response.end(status === 304 || method === 'HEAD' ? undefined : answer.body);
      const seconds = (performance.now() - started) / 1000;
      app.recordResponse?.(method, entry.route, status, seconds);
      logRequest(app.log, method, url, status, seconds * 1000, id);
      return true;
    });
  },
  { name: 'response-cache', dependencies: ['http-caching', 'store', 'links'] },
);
