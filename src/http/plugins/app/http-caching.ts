import { hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import packageJson from '../../../../package.json' with { type: 'json' };
import { HEALTH_PATHS } from '../../routes/health.ts';
import { METRICS_PATH } from '../external/metrics.ts';
import { API_PREFIX } from './links.ts';
import { CODING_TAG_SUFFIX } from '../../encoding.ts';
import type { ContentCoding } from '../../encoding.ts';
import { isStream, varyOnEncoding } from './compression.ts';

/**
 * Validators and freshness for edge caches and clients. A response is a function of the dataset
 * version, the URL, this server's code, the origin its links are built on and the content coding
 * (see compression); the ETag names all five, so it changes exactly when the bytes can, and a brotli,
 * a gzip and an identity body each have their own strong ETag.
 *
 * A conditional request is answered 304 only where its plain answer is a 200: a 404, a 400 or a
 * redirect stays what it is. Whether the client's validators match is known before any route runs
 * (from the dataset version alone), but not what the answer would be: a response-cache hit is known
 * to be a 200 and is answered 304 at once, without a body (see response-cache); any other request
 * runs its route, and `notModified` turns a 200 into a 304 once the response cache has kept it.
 *
 * Policy: successful GETs are `public, max-age=<maxAge>` with an ETag and Last-Modified (the publish
 * time). 400 and 404 answers depend only on the request and the dataset, so they are cacheable too,
 * for a fifth of that (a mistyped URL should not be remembered long); anything else (405, 5xx) is
 * `no-store`.
 */
export interface HttpCachingOptions {
  /** Seconds responses may be cached (Cache-Control max-age). */
  maxAge: number;
}

const UNCACHED_PREFIXES = [`${API_PREFIX}/docs`, ...HEALTH_PATHS, METRICS_PATH];

/** `route` is the request's routeOptions, when the caller has it already (Fastify makes a new one per read). */
export function isCacheableRequest(request: FastifyRequest, route = request.routeOptions): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const url = route.url;
  return url !== undefined && !UNCACHED_PREFIXES.some((prefix) => url.startsWith(prefix));
}

/** The part of a representation that is not in its URL: the code that renders it and the link origin. */
const representationTag = (origin: string): string => hash('sha1', `${packageJson.version}\n${origin}`, 'base64url').slice(0, 10);

/** Whether an If-None-Match header lists this ETag (or `*`); weak comparison, as RFC 9110 asks for GET. */
function matchesAny(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * For a route whose answer to the same URL comes in more than one form (the profile: JSON or a
     * page): the request header that chooses, and which form a request gets. The form is part of the
     * ETag and of the response cache's key, and the header is named in Vary.
     */
    representation?: { vary: string; of: (request: FastifyRequest) => string };
  }
  interface FastifyRequest {
    /**
     * Set when this request is cacheable: what its response is a function of (dataset, link origin)
     * and its validators, read once here for every later hook.
     */
    cacheable?: {
      version: string;
      publishedAt: string;
      origin: string;
      etag: string;
      lastModified: string;
      /** Which of the route's forms this request gets (see `representation`); empty for one form. */
      representation: string;
      /** Whether the client's If-None-Match (or If-Modified-Since) says it holds this response already. */
      notModified: boolean;
    };
  }
}

/**
 * Answers 304 to a request whose answer is known to be a 200 that the client holds already. The
 * validators and Cache-Control are those of the 200 (set on send, below), and so is Vary, as RFC 9110
 * asks; there is no body, and so no content headers.
 */
export function sendNotModified(reply: FastifyReply): FastifyReply {
  varyOnEncoding(reply);
  return reply.code(304).send();
}

export default fp<HttpCachingOptions>(
  async (app, { maxAge }) => {
    const successPolicy = `public, max-age=${maxAge}`;
    const errorPolicy = `public, max-age=${Math.floor(maxAge / 5)}`;

    // Validators change only with the dataset and the link origin: the last ones are reused, so a
    // hot path costs no hashing or date formatting.
    let last: { version: string; origin: string; etags: Record<ContentCoding, string>; lastModified: string } | undefined;
    const validatorsOf = (version: string, publishedAt: string, origin: string, coding: ContentCoding) => {
      if (last?.version !== version || last.origin !== origin) {
        const tag = `${version}.${representationTag(origin)}`;
        const etag = (coding: ContentCoding) => `"${tag}${CODING_TAG_SUFFIX[coding]}"`;
        const etags = { br: etag('br'), gzip: etag('gzip'), identity: etag('identity') };
        last = { version, origin, etags, lastModified: new Date(publishedAt).toUTCString() };
      }
      return { etag: last.etags[coding], lastModified: last.lastModified };
    };

    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions;
      if (!isCacheableRequest(request, route)) return;
      const { version, publishedAt } = await request.store.info();
      const origin = request.publicOrigin();
      const validators = validatorsOf(version, publishedAt, origin, request.contentCoding());
      const { lastModified } = validators;
      const forms = route.config.representation;
      const representation = forms?.of(request) ?? '';
      if (forms !== undefined) reply.header('vary', forms.vary);
      const etag = representation === '' ? validators.etag : `${validators.etag.slice(0, -1)}.${representation}"`;
      const ifNoneMatch = request.headers['if-none-match'];
      const ifModifiedSince = request.headers['if-modified-since'];
      const notModified =
        ifNoneMatch !== undefined
          ? matchesAny(ifNoneMatch, etag)
          : ifModifiedSince !== undefined && Date.parse(ifModifiedSince) >= Date.parse(lastModified);
      request.cacheable = { version, publishedAt, origin, etag, lastModified, representation, notModified };
    });

    app.addHook('onSend', async (request, reply, payload) => {
      if (reply.getHeader('cache-control') !== undefined) return payload;
      const status = reply.statusCode;
      if (request.cacheable !== undefined && status < 400) {
        reply.header('cache-control', successPolicy);
        if (status === 200 || status === 304) reply.headers({ etag: request.cacheable.etag, 'last-modified': request.cacheable.lastModified });
      } else if ((request.method === 'GET' || request.method === 'HEAD') && (status === 400 || status === 404)) {
        reply.header('cache-control', errorPolicy);
      } else if (status >= 400) {
        reply.header('cache-control', 'no-store');
      }
      return payload;
    });
  },
  { name: 'http-caching', dependencies: ['store', 'links', 'content-coding'] },
);

/**
 * Turns a route's 200 into a 304 when the client holds it already. Registered after the response
 * cache, so the 200 is kept first (the next revalidation is then answered without running the route),
 * and before compression, so no body is compressed for nothing.
 */
export const notModified = fp(
  async (app) => {
    app.addHook('onSend', async (request, reply, payload) => {
      if (reply.statusCode !== 200 || request.cacheable?.notModified !== true) return payload;
      // A streamed list already begun: stopping it ends its hold on the store too.
      if (isStream(payload)) (payload as Readable).destroy();
      reply.removeHeader('content-type').removeHeader('content-length').removeHeader('content-encoding');
      reply.code(304);
      varyOnEncoding(reply);
      // Fastify's HEAD routes measure the payload they are given, which cannot be null.
      return request.method === 'HEAD' ? '' : null;
    });
  },
  { name: 'not-modified', dependencies: ['http-caching'] },
);
