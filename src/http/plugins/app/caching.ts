import fp from 'fastify-plugin';
import type { StoreProvider } from '../../../store/store.ts';
import compression from './compression.ts';
import httpCaching, { notModified, successPolicy } from './http-caching.ts';
import responseCache from './response-cache.ts';

/**
 * How responses are cached, in one component with one policy: the content coding of each response
 * and its compression, validators and 304s, Cache-Control, and the response cache, which answers hits
 * before Fastify where it can (response-cache.ts). A route is cacheable unless it says
 * `config: { cache: false }`.
 */
export interface CachingOptions {
  /** Seconds responses may be cached by clients and edges (Cache-Control max-age). */
  maxAge: number;
  /** Bytes the response cache may hold; 0 turns it off. */
  responseCacheBytes: number;
  /** The settings whose values appear in responses: part of every ETag, beside the code's digest. */
  renderedSettings: unknown;
  stores: StoreProvider;
  publicBaseUrl: string | undefined;
  /**
   * Whether a hit may be answered before Fastify: not when links, or the rate limit's client
   * address, follow a trusted proxy's X-Forwarded-* headers.
   */
  hitsBeforeFastify: boolean;
}

export default fp<CachingOptions>(
  async (app, options) => {
    const responsesCached = options.responseCacheBytes > 0;
    await app.register(httpCaching, { maxAge: options.maxAge, renderedSettings: options.renderedSettings, responsesCached });
    // In this order: a cached response is sent already compressed, and compression leaves it; a 200
    // the client holds is kept by the response cache before it becomes a 304, and never compressed.
    await app.register(responseCache, {
      maxBytes: options.responseCacheBytes,
      cacheControl: successPolicy(options.maxAge),
      hitsBeforeFastify: options.hitsBeforeFastify ? { stores: options.stores, publicBaseUrl: options.publicBaseUrl } : undefined,
    });
    await app.register(notModified);
    await app.register(compression);
  },
  { name: 'caching', dependencies: ['store', 'links'] },
);
