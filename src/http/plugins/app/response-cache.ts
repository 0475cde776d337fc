import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { compressBuffer } from '../../encoding.ts';
import type { ContentCoding } from '../../encoding.ts';
import { tooLongTarget } from '../../limits.ts';
import { logRequest } from '../../request-log.ts';
import { REQUEST_ID_HEADER, requestId } from '../../request-id.ts';
import type { StoreProvider } from '../../../store/store.ts';
import { CORS_RESPONSE_HEADERS } from '../external/cors.ts';
import { clientHolds, codingFor, knownDataset, sendNotModified } from './http-caching.ts';
import { originOf } from './links.ts';

/**
 * Finished responses, kept in memory and sent again without touching the store or rendering
 * anything. An entry is keyed by the dataset version, the link origin and the normalised request
 * target, so a publish makes every older entry unreachable (and the first response of the new
 * version drops them). Each entry holds the identity body and, made the first time a client asks
 * for them, its brotli and gzip forms: a hot response is never compressed twice.
 *
 * Only successful, cacheable (see http-caching) buffered responses are kept; streams are not. The
 * cache is bounded in bytes and evicts the least recently used entries.
 */
export interface ResponseCacheOptions {
  /** Bytes of bodies (all codings) the cache may hold; 0 turns it off. */
  maxBytes: number;
}

/** No one entry may take more than this share of the cache. */
const MAX_ENTRY_SHARE = 16;
/** Rough per-entry overhead beyond the bodies: the key, the Map slot, the object. */
const ENTRY_OVERHEAD = 200;

/**
 * The body in memory of its own, so that the bytes counted are the bytes kept. Bodies under 32 KiB
 * are usually views into a shared 64 KiB slab (Buffer.from(string) and zlib's output both draw from
 * Node's buffer pool): keeping such a view keeps its whole slab alive. Kept as views, bodies
 * counted as 64 MiB held 355 to 430 MB outside the V8 heap under load; copied, about 80 MB
 * (bench/soak.ts, 256 connections).
 */
function ownMemory(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
  const copy = Buffer.allocUnsafeSlow(body.byteLength);
  body.copy(copy);
  return copy;
}

/** Headers a route may set that describe its representation, kept with it (a page's policy, a list's links). */
const REPRESENTATION_HEADERS = ['content-security-policy', 'content-language', 'content-disposition', 'link'] as const;

class CachedResponse {
  readonly contentType: string;
  /** The route's REPRESENTATION_HEADERS, sent again with every hit. */
  readonly headers: Record<string, string>;
  /** The route that made it, by its pattern (for /metrics). */
  readonly route: string;
  private readonly bodies: Partial<Record<ContentCoding, Buffer>>;
  bytes: number;

  constructor(contentType: string, headers: Record<string, string>, identity: Buffer, keyLength: number, route: string) {
    this.contentType = contentType;
    this.headers = headers;
    this.route = route;
    this.bodies = { identity: ownMemory(identity) };
    this.bytes = identity.length + keyLength + ENTRY_OVERHEAD;
  }

  /** The body in a coding, compressed once, the first time it is asked for; returns the bytes added too. */
  body(coding: ContentCoding): { body: Buffer; added: number } {
    const known = this.bodies[coding];
    if (known !== undefined) return { body: known, added: 0 };
    const body = ownMemory(compressBuffer(this.bodies.identity!, coding as Exclude<ContentCoding, 'identity'>));
    this.bodies[coding] = body;
    this.bytes += body.length;
    return { body, added: body.length };
  }
}

export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bytes = 0;
  private publishedAt = '';

  readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /** Lookups answered from the cache, and not, since the server started (for /metrics). */
  hits = 0;
  misses = 0;

  /** `countMiss`: false where a miss is looked up again (see answerHit), so that it counts once. */
  get(key: string, countMiss = true): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      if (countMiss) this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /**
   * Keeps a response of the dataset published at `publishedAt`. A newer dataset empties the cache;
   * a response of an older one (a request that began before the publish) is not kept.
   */
  add(key: string, publishedAt: string, contentType: string, identity: Buffer, route: string, headers: Record<string, string> = {}): CachedResponse | undefined {
    if (publishedAt < this.publishedAt) return undefined;
    if (publishedAt > this.publishedAt) {
      this.entries.clear();
      this.bytes = 0;
      this.publishedAt = publishedAt;
    }
    const entry = new CachedResponse(contentType, headers, identity, key.length, route);
    if (entry.bytes > this.maxBytes / MAX_ENTRY_SHARE) return undefined;
    this.remove(key);
    this.entries.set(key, entry);
    this.grew(entry.bytes);
    return entry;
  }

  /** Accounts for bytes an entry grew by (a new coding), evicting the least recently used entries. */
  grew(bytes: number): void {
    this.bytes += bytes;
    for (const [key] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(key);
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

/**
 * The request target as a cache key: the path without a trailing slash, and the query parameters
 * decoded, sorted and encoded again, so `?b=2&a=1`, `?a=1&b=2` and `?a=%31&b=2` share one entry.
 * The order of the parameters does not change a response (pages' links list them sorted too).
 */
export function normalisedTarget(url: string): string {
  const mark = url.indexOf('?');
  const path = (mark === -1 ? url : url.slice(0, mark)).replace(/(.)\/+$/, '$1');
  if (mark === -1 || mark === url.length - 1) return path;
  const query = new URLSearchParams(url.slice(mark + 1));
  query.sort();
  return `${path}?${query}`;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Where this request's response is to be kept, when it may be. */
    responseCacheKey?: string;
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

const cacheKey = (version: string, origin: string, url: string, representation: string): string => `${version}\n${origin}\n${normalisedTarget(url)}\n${representation}`;

/**
 * Headers of a 200 and of a 304 for a kept response answered before Fastify, as http-caching and
 * compression set them on Fastify's path (RFC 9110: a 304 carries the 200's validators,
 * Cache-Control and Vary).
 */
function validatorHeaders(cacheControl: string, etag: string, lastModified: string): Record<string, string> {
  return { vary: 'Accept-Encoding', 'cache-control': cacheControl, etag, 'last-modified': lastModified };
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
    app.decorate('responseCache', cache);

    app.addHook('onRequest', async (request: FastifyRequest, reply) => {
      const cacheable = request.cacheable;
      if (cacheable === undefined) return;
      const key = cacheKey(cacheable.version, cacheable.origin, request.url, cacheable.representation);
      const entry = cache.get(key);
      if (entry === undefined) {
        request.responseCacheKey = key;
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
      const entry = cache.add(key, publishedAt, String(reply.getHeader('content-type')), identity, request.routeOptions.url!, headers);
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
      if (tooLongTarget(url) !== undefined || headers.host === undefined || headers['transfer-encoding'] !== undefined) return false;
      if (headers['content-length'] !== undefined && headers['content-length'] !== '0') return false;
      const lease = stores.acquire();
      const dataset = knownDataset(lease.store);
      lease.release();
      if (dataset === undefined) return false;
      // This server speaks plain HTTP (TLS ends at a proxy), and takes no X-Forwarded-* here (see its options).
      const origin = configuredOrigin ?? originOf('http', headers.host);
      const entry = cache.get(cacheKey(dataset.version, origin, url, ''), false);
      if (entry === undefined) return false;
      // Counted where Fastify's rate-limit hook would count it; a client over the limit gets its 429 there.
      const rateLimit = app.countBeforeFastify === undefined ? {} : app.countBeforeFastify(request);
      if (rateLimit === undefined) return false;
      const coding = codingFor(headers, true);
      const { etag, lastModified } = app.validators.of(dataset.version, dataset.publishedAt, origin, coding);
      const id = requestId(request);
      const head: Record<string, string | number> = {
        [REQUEST_ID_HEADER]: id,
        'x-content-type-options': 'nosniff',
        ...rateLimit,
        ...CORS_RESPONSE_HEADERS,
        ...validatorHeaders(cacheControl, etag, lastModified),
      };
      // Read to its end now (it has no body): else Node dumps it once the response has finished.
      request.resume();
      let status = 304;
      if (clientHolds(headers, etag, lastModified)) {
        response.writeHead(304, head);
        response.end();
      } else {
        status = 200;
        const { body, added } = entry.body(coding);
        if (added > 0) cache.grew(added);
        head['content-type'] = entry.contentType;
        Object.assign(head, entry.headers);
        if (coding !== 'identity') head['content-encoding'] = coding;
        head['content-length'] = body.length;
        response.writeHead(200, head);
        response.end(method === 'HEAD' ? undefined : body);
      }
      const seconds = (performance.now() - started) / 1000;
      app.recordResponse?.(method, entry.route, status, seconds);
      logRequest(app.log, method, url, status, seconds * 1000, id);
      return true;
    });
  },
  { name: 'response-cache', dependencies: ['http-caching', 'store', 'links'] },
);
