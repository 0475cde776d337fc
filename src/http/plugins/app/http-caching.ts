import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CODE_DIGEST } from '../../code-digest.ts';
import { CODING_TAG_SUFFIX, negotiateCoding } from '../../encoding.ts';
import type { ContentCoding } from '../../encoding.ts';
import type { Store } from '../../../store/store.ts';
import { isStream, varyOnEncoding } from './compression.ts';

/**
 * Validators and freshness for edge caches and clients. A response is a function of the dataset
 * version, the URL, this server's code and the settings it renders (code-digest.ts), the origin its
 * links are built on and the content coding (see compression); the ETag names them all, so it changes
 * whenever the bytes can, and a brotli, a gzip and an identity body each have their own strong ETag.
 *
 * A conditional request is answered 304 only where its plain answer is a 200: a 404, a 400 or a
 * redirect stays what it is. Whether the client's validators match is known before any route runs
 * (from the dataset version alone), but not what the answer would be: a response-cache hit is known
 * to be a 200 and is answered 304 at once, without a body (see response-cache); any other request
 * runs its route, and `notModified` turns a 200 into a 304 once the response cache has kept it.
 *
 * Policy: successful GETs are `public, max-age=<maxAge>` with an ETag and Last-Modified (the publish
 * time). 400 and 404 answers depend only on the request and the dataset, so they are cacheable too,
 * for a fifth of that (a mistyped URL should not be remembered long); anything else (405, 410, 429,
 * 5xx) is `no-store`. A 410 (the changes feed: a version whose changes are not kept) tells a client to
 * copy the whole dataset again, so it must not outlive the moment it was true: a server that has not
 * yet switched to a version another has just published (another worker or instance, a replica
 * catching up) answers 410 for it, and a cache would hand that to every client of the new version.
 */
export interface HttpCachingOptions {
  /** Seconds responses may be cached (Cache-Control max-age). */
  maxAge: number;
  /** The settings whose values appear in responses (the root's details), as JSON-able data. */
  renderedSettings: unknown;
  /** Whether the response cache keeps successful buffered responses. */
  responsesCached: boolean;
}

/**
 * A GET or HEAD of a route that does not say `config: { cache: false }` (probes, metrics, the docs
 * page). `route` is the request's routeOptions, when the caller has it already (Fastify makes a new
 * one per read).
 */
export function isCacheableRequest(request: FastifyRequest, route = request.routeOptions): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  return route.url !== undefined && route.config.cache !== false;
}

/**
 * The dataset of each store, once a request has read it: what a cache hit answered before Fastify
 * (response-cache.ts) needs, known without waiting.
 */
const datasets = new WeakMap<Store, { version: string; publishedAt: string }>();
export const knownDataset = (store: Store): { version: string; publishedAt: string } | undefined => datasets.get(store);

/**
 * Which content coding a response is sent in, decided once per request, before anything is sent: the
 * ETag names it, the response cache keeps a body per coding, and compression makes it. Where a client
 * accepts both brotli and gzip: brotli for a response the response cache keeps, since it is compressed
 * once and sent many times and brotli is about a tenth smaller on JSON; gzip for a response made
 * afresh on every request (a streamed list, an error, the docs' assets, or any response when the cache
 * is off), since gzip costs about half as much CPU per response (see encoding.ts).
 */
export const codingFor = (headers: IncomingHttpHeaders, kept: boolean): ContentCoding => negotiateCoding(headers['accept-encoding'], kept ? 'br' : 'gzip');

/** Whether the route (the request's routeOptions) says the answer to this request is a stream made afresh for it. */
const isStreamed = (request: FastifyRequest, route: FastifyRequest['routeOptions']): boolean =>
  route.config.streamed?.((request.query ?? {}) as Record<string, unknown>) === true;

/** What the responses of a server are made by, besides the dataset: its code and the settings it renders. */
const renderingTag = (renderedSettings: unknown): string => hash('sha1', `${CODE_DIGEST}\n${JSON.stringify(renderedSettings)}`, 'base64url');

/** The part of a representation that is not in its URL: what renders it and the link origin. */
const representationTag = (rendering: string, origin: string): string => hash('sha1', `${rendering}\n${origin}`, 'base64url').slice(0, 10);

/** Whether an If-None-Match header lists this ETag (or `*`); weak comparison, as RFC 9110 asks for GET. */
function matchesAny(header: string, etag: string): boolean {
  if (header === etag) return true;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

/** Whether a request's If-None-Match (or, without one, If-Modified-Since) says the client holds this response. */
export function clientHolds(headers: IncomingHttpHeaders, etag: string, lastModified: string): boolean {
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) return matchesAny(ifNoneMatch, etag);
  const ifModifiedSince = headers['if-modified-since'];
  return ifModifiedSince !== undefined && Date.parse(ifModifiedSince) >= Date.parse(lastModified);
}

/**
 * The validators of a dataset version's responses from one link origin, in each coding. They change
 * only with the dataset and the origin: the last ones are kept, so a hot path costs no hashing or
 * date formatting.
 */
export class Validators {
  private last: { version: string; origin: string; etags: Record<ContentCoding, string>; lastModified: string } | undefined;
  private readonly rendering: string;

  /** `rendering`: see renderingTag. */
  constructor(rendering: string) {
    this.rendering = rendering;
  }

  of(version: string, publishedAt: string, origin: string, coding: ContentCoding): { etag: string; lastModified: string } {
    let last = this.last;
    if (last?.version !== version || last.origin !== origin) {
      const tag = `${version}.${representationTag(this.rendering, origin)}`;
      const etag = (coding: ContentCoding) => `"${tag}${CODING_TAG_SUFFIX[coding]}"`;
      last = { version, origin, etags: { br: etag('br'), gzip: etag('gzip'), identity: etag('identity') }, lastModified: new Date(publishedAt).toUTCString() };
      this.last = last;
    }
    return { etag: last.etags[coding], lastModified: last.lastModified };
  }
}

/** Cache-Control of a successful cacheable response, and of a 400 or 404 (a fifth as long: a mistyped URL should not be remembered long). */
export const successPolicy = (maxAge: number): string => `public, max-age=${maxAge}`;
const errorPolicy = (maxAge: number): string => `public, max-age=${Math.floor(maxAge / 5)}`;

declare module 'fastify' {
  interface FastifyInstance {
    validators: Validators;
  }
  interface FastifyContextConfig {
    /** false: responses of this route are never cached (`no-store` is the route's to set). */
    cache?: boolean;
    /** Whether the route answers a request with this query by a stream made afresh for it, an export (see codingFor). */
    streamed?: (query: Record<string, unknown>) => boolean;
    /** The route's body is compressed already (a ZIP archive): it is sent as it is, whatever coding the client accepts. */
    precompressed?: boolean;
    /**
     * For a route whose answer to the same URL comes in more than one form (the profile: JSON or a
     * page): the request header that chooses, and which form a request gets. The form is part of the
     * ETag and of the response cache's key, and the header is named in Vary.
     */
    representation?: { vary: string; of: (request: FastifyRequest) => string };
  }
  interface FastifyRequest {
    /** The content coding of this request's response (see codingFor). */
    contentCoding(): ContentCoding;
    negotiatedCoding?: ContentCoding;
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
  async (app, { maxAge, renderedSettings, responsesCached }) => {
    const success = successPolicy(maxAge);
    const error = errorPolicy(maxAge);
    app.decorate('validators', new Validators(renderingTag(renderedSettings)));
    app.decorateRequest('negotiatedCoding', undefined);
    app.decorateRequest('contentCoding', function (this: FastifyRequest): ContentCoding {
      if (this.negotiatedCoding === undefined) {
        const route = this.routeOptions;
        this.negotiatedCoding = route.config.precompressed === true ? 'identity' : codingFor(this.headers, responsesCached && isCacheableRequest(this, route) && !isStreamed(this, route));
      }
      return this.negotiatedCoding;
    });

    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions;
      if (!isCacheableRequest(request, route)) return;
      const { version, publishedAt } = await request.store.info();
      if (!datasets.has(request.store)) datasets.set(request.store, { version, publishedAt });
      const origin = request.publicOrigin();
      const validators = app.validators.of(version, publishedAt, origin, request.contentCoding());
      const { lastModified } = validators;
      const forms = route.config.representation;
      const representation = forms?.of(request) ?? '';
      if (forms !== undefined) reply.header('vary', forms.vary);
      const etag = representation === '' ? validators.etag : `${validators.etag.slice(0, -1)}.${representation}"`;
      const notModified = clientHolds(request.headers, etag, lastModified);
      request.cacheable = { version, publishedAt, origin, etag, lastModified, representation, notModified };
    });

    app.addHook('onSend', async (request, reply, payload) => {
      if (reply.getHeader('cache-control') !== undefined) return payload;
      const status = reply.statusCode;
      if (request.cacheable !== undefined && status < 400) {
        reply.header('cache-control', success);
        if (status === 200 || status === 304) reply.headers({ etag: request.cacheable.etag, 'last-modified': request.cacheable.lastModified });
      } else if ((request.method === 'GET' || request.method === 'HEAD') && (status === 400 || status === 404)) {
        reply.header('cache-control', error);
      } else if (status >= 400) {
        reply.header('cache-control', 'no-store');
      }
      return payload;
    });
  },
  { name: 'http-caching', dependencies: ['store', 'links'] },
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
