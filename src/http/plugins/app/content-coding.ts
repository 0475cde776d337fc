import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { negotiateCoding } from '../../encoding.ts';
import type { ContentCoding } from '../../encoding.ts';
import { isCacheableRequest } from './http-caching.ts';

/**
 * Which content coding each response is sent in, decided once per request, before anything is sent:
 * the ETag names it (http-caching), the response cache keeps a body per coding, and compression
 * makes it.
 *
 * Where a client accepts both brotli and gzip: brotli for a response the response cache keeps, since
 * it is compressed once and sent many times, and brotli is about a tenth smaller on JSON; gzip for a
 * response made afresh on every request (a streamed list, an error, the docs' assets, or any response
 * when the cache is off), since gzip costs about half as much CPU per response (see encoding.ts).
 */
export interface ContentCodingOptions {
  /** Whether the response cache keeps successful buffered responses. */
  responsesCached: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The content coding of this request's response (see content-coding.ts). */
    contentCoding(): ContentCoding;
    negotiatedCoding?: ContentCoding;
  }
}

const isStreamedList = (request: FastifyRequest): boolean => (request.query as Record<string, unknown> | undefined)?.format === 'ndjson';
const mayBeKept = (request: FastifyRequest): boolean => isCacheableRequest(request) && !isStreamedList(request);

export default fp<ContentCodingOptions>(
  async (app, { responsesCached }) => {
    app.decorateRequest('negotiatedCoding', undefined);
    app.decorateRequest('contentCoding', function (this: FastifyRequest): ContentCoding {
      this.negotiatedCoding ??= negotiateCoding(this.headers['accept-encoding'], responsesCached && mayBeKept(this) ? 'br' : 'gzip');
      return this.negotiatedCoding;
    });
  },
  { name: 'content-coding' },
);
