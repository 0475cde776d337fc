import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { Transform } from 'node:stream';

/**
 * Content codings this server sends, best first, and how each is made. Brotli quality 5 compresses a
 * JSON page to within a few per cent of quality 11 at a hundredth of the time, so a response is
 * compressed as it is first made, without a separate, slower pass.
 */
export type ContentCoding = 'br' | 'gzip' | 'identity';

const BROTLI_QUALITY = 5;
const GZIP_LEVEL = 6;

const negotiator = new Negotiator<ContentCoding>({ supportedValues: ['br', 'gzip', 'identity'], cache: boundedCache(256) });

/** A small memo for header values: the same few Accept-Encoding strings arrive again and again. */
function boundedCache(limit: number) {
  const entries = new Map<string, string>();
  const cache = {
    get: (key: string) => entries.get(key),
    has: (key: string) => entries.has(key),
    set: (key: string, value: string) => {
      if (entries.size >= limit) entries.clear();
      entries.set(key, value);
      return cache;
    },
  };
  return cache;
}

/**
 * The coding to send for an Accept-Encoding header. No header means any coding is acceptable
 * (RFC 9110 12.5.3), but a client that does not ask gets identity, as most servers do; a header that
 * refuses everything we have also gets identity rather than a 406.
 */
export function negotiateCoding(header: string | undefined): ContentCoding {
  if (header === undefined || header === '') return 'identity';
  return negotiator.negotiate(header) ?? 'identity';
}

/** What an entity tag of a compressed representation carries, so each coding has its own strong ETag. */
export const CODING_TAG_SUFFIX: Record<ContentCoding, string> = { br: '-br', gzip: '-gz', identity: '' };

export function compressBuffer(body: Buffer, coding: Exclude<ContentCoding, 'identity'>): Buffer {
  return coding === 'br'
    ? brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      })
    : gzipSync(body, { level: GZIP_LEVEL });
}

/** A compressing stream; brotli one step lower than for buffers, since a stream is compressed on every request. */
export function compressingStream(coding: Exclude<ContentCoding, 'identity'>): Transform {
  return coding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY - 1 } })
    : createGzip({ level: GZIP_LEVEL });
}

/** Media types worth compressing: text, JSON and JavaScript. Images and fonts already are. */
export const isCompressibleType = (contentType: string): boolean =>
  /^(text\/|application\/(json|x-ndjson|problem\+json|javascript)|[^;]*\+json)/.test(contentType);
