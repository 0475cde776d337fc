import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { Transform } from 'node:stream';

/**
 * Content codings this server sends, and how each is made. A response is compressed as it is made, on
 * the request that needs it, so the settings favour speed: on a 11 kB page of organizations brotli
 * quality 4 takes about 80 µs for 3.1 kB (quality 11: 9 ms for 2.7 kB) and gzip level 6 about 45 µs
 * for 3.2 kB. Brotli's window is no larger than the body, which spares allocating 4 MiB per call.
 */
export type ContentCoding = 'br' | 'gzip' | 'identity';

const BROTLI_QUALITY = 4;
const GZIP_LEVEL = 6;

const brotliWindowBits = (length: number): number =>
  Math.min(constants.BROTLI_MAX_WINDOW_BITS, Math.max(constants.BROTLI_MIN_WINDOW_BITS + 6, Math.ceil(Math.log2(length + 1))));

/** Where a client accepts both equally, the first listed wins. */
const negotiators = {
  br: new Negotiator<ContentCoding>({ supportedValues: ['br', 'gzip', 'identity'], cache: boundedCache(256) }),
  gzip: new Negotiator<ContentCoding>({ supportedValues: ['gzip', 'br', 'identity'], cache: boundedCache(256) }),
};

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
 * The coding to send for an Accept-Encoding header, `preferred` first where the client accepts both.
 * No header means any coding is acceptable (RFC 9110 12.5.3), but a client that does not ask gets
 * identity, as most servers do; a header that refuses everything we have also gets identity rather
 * than a 406.
 */
export function negotiateCoding(header: string | undefined, preferred: 'br' | 'gzip'): ContentCoding {
  if (header === undefined || header === '') return 'identity';
  return negotiators[preferred].negotiate(header) ?? 'identity';
}

/** What an entity tag of a compressed representation carries, so each coding has its own strong ETag. */
export const CODING_TAG_SUFFIX: Record<ContentCoding, string> = { br: '-br', gzip: '-gz', identity: '' };

/**
 * Output chunks of node:zlib's one-shot functions, where those are used (see ReusedCompressor).
 * Node's default (16 KiB) is allocated outside Buffer's shared pool, a new backing store per call,
 * and that turnover started a full mark-compact about every 0.2 s in a loop of page-sized calls (16
 * in 3 s; 2 with this size, at the same speed). Below 4 KiB a chunk comes from the pool.
 */
const OUTPUT_CHUNK_BYTES = 2048;

const brotliParameters = (length: number) => ({
  [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
  [constants.BROTLI_PARAM_LGWIN]: brotliWindowBits(length),
  [constants.BROTLI_PARAM_SIZE_HINT]: length,
});

/** node:zlib's one-shot compression: a new zlib stream per call. */
function compressOnce(body: Buffer, coding: Exclude<ContentCoding, 'identity'>): Buffer {
  return coding === 'br'
    ? brotliCompressSync(body, { chunkSize: OUTPUT_CHUNK_BYTES, params: brotliParameters(body.length) })
    : gzipSync(body, { level: GZIP_LEVEL, chunkSize: OUTPUT_CHUNK_BYTES });
}

/** What a node:zlib stream keeps inside (as of Node 24; not public API): its native compressor and where that reports a write. */
interface NativeCompressor {
  writeSync(flush: number, input: Uint8Array, inOffset: number, inLength: number, output: Uint8Array, outOffset: number, outLength: number): void;
  init(...parameters: unknown[]): void;
  reset(): void;
}
type ZlibStream = Transform & { _handle?: NativeCompressor | null; _writeState?: Uint32Array };

/** Where reused compressors write; what they write is copied out, so no response shares it. */
const scratch = Buffer.allocUnsafeSlow(16 * 1024);

/** node:zlib's table of brotli parameters for `init`: one slot per BROTLI_PARAM_*, 0xFFFFFFFF where unset. */
const brotliParameterSlots = new Uint32Array(
  1 + Math.max(...Object.entries(constants).flatMap(([name, value]) => (name.startsWith('BROTLI_PARAM_') ? [value as number] : []))),
);

/** What a compressor calls when an asynchronous write is done; these writes are synchronous. */
const noCallback = (): void => {};

/**
 * One-shot compression on one zlib stream per coding, made once and reused for every call.
 *
 * node:zlib's brotliCompressSync and gzipSync make a zlib stream per call, and each stream's
 * WritableState stores an `onwrite` closure that V8's optimising compilers allocate straight in the
 * old space (57 B a stream). That closure is dead as soon as the call returns, but a scavenge takes
 * every old-space object for live: through it, the whole stream (states, listeners, its Uint32Array,
 * its output buffer's pooled slab) survives each scavenge and is promoted, about 1.1 KB a call, for a
 * mark-compact to free. At 2,000,000 organizations an uncached page at one connection promoted about
 * 200 KB a scavenge (17 KB without compression), and a mark-compact followed every 0.5 to 1 s, each
 * 4 to 25 ms: the page's p99 (docs/performance.md, "Serving").
 *
 * Reused, a stream's native compressor is driven as node:zlib's own processChunkSync drives it:
 * gzip is reset before each call (its level is kept); brotli is re-initialised with the call's
 * parameters (its reset would restore quality 11). These are node:zlib's internals, so the module
 * checks them once, against compressOnce, and uses compressOnce wherever they differ or fail.
 */
class ReusedCompressor {
  private stream: ZlibStream | undefined;
  private readonly make: () => Transform;
  private readonly begin: (compressor: NativeCompressor, writeState: Uint32Array, body: Buffer) => void;
  private readonly finish: number;

  constructor(coding: Exclude<ContentCoding, 'identity'>) {
    if (coding === 'br') {
      this.make = () => createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } });
      this.begin = (compressor, writeState, body) => {
        brotliParameterSlots.fill(0xffffffff);
        for (const [slot, value] of Object.entries(brotliParameters(body.length))) brotliParameterSlots[Number(slot)] = value;
        compressor.init(brotliParameterSlots, writeState, noCallback);
      };
      this.finish = constants.BROTLI_OPERATION_FINISH;
    } else {
      this.make = () => createGzip({ level: GZIP_LEVEL });
      this.begin = (compressor) => compressor.reset();
      this.finish = constants.Z_FINISH;
    }
  }

  compress(body: Buffer): Buffer {
    const stream = (this.stream ??= this.open());
    const compressor = stream._handle!;
    const writeState = stream._writeState!;
    try {
      this.begin(compressor, writeState, body);
      const parts: Buffer[] = [];
      let length = 0;
      let inOffset = 0;
      let inLength = body.length;
      for (;;) {
        compressor.writeSync(this.finish, body, inOffset, inLength, scratch, 0, scratch.length);
        // A failed write destroys the stream at once (its error is emitted later, to the listener in open).
        if (stream.destroyed) throw stream.errored ?? new Error('compression failed');
        const [outLeft, inLeft] = writeState as unknown as [number, number];
        const written = scratch.length - outLeft;
        if (written > 0) {
          const part = Buffer.allocUnsafe(written);
          scratch.copy(part, 0, 0, written);
          parts.push(part);
          length += written;
        }
        inOffset += inLength - inLeft;
        inLength = inLeft;
        // Room left in the output: the input is all taken and the stream finished.
        if (outLeft !== 0) break;
      }
      return parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    } catch (error) {
      // The next call starts on a new stream.
      this.stream = undefined;
      stream.destroy();
      throw error;
    }
  }

  private open(): ZlibStream {
    const stream = this.make() as ZlibStream;
    stream.on('error', () => {});
    return stream;
  }

  /** Whether this Node's zlib streams work as expected: the same bytes as compressOnce, call after call. */
  static checked(coding: Exclude<ContentCoding, 'identity'>): ReusedCompressor | undefined {
    try {
      const probe = new ReusedCompressor(coding);
      const stream = probe.make() as ZlibStream;
      const usable = typeof stream._handle?.writeSync === 'function' && typeof stream._handle.init === 'function' && stream._writeState instanceof Uint32Array;
      stream.destroy();
      if (!usable) return undefined;
      // Text, and bytes that do not compress (more than the scratch buffer holds), twice each.
      const noise = Buffer.alloc(scratch.length + 1024);
      for (let i = 0, seed = 1; i < noise.length; i++) noise[i] = (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
      const text = Buffer.from(JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `organization ${i}` }))));
      for (const sample of [text, noise, Buffer.alloc(0), text, noise]) {
        if (!probe.compress(sample).equals(compressOnce(sample, coding))) return undefined;
      }
      return probe;
    } catch {
      return undefined;
    }
  }
}

const reused = { br: ReusedCompressor.checked('br'), gzip: ReusedCompressor.checked('gzip') };

/** Whether compressBuffer reuses a stream for this coding here (see ReusedCompressor), or falls back to node:zlib's one-shot functions. */
export const reusesStream = (coding: Exclude<ContentCoding, 'identity'>): boolean => reused[coding] !== undefined;

/** A whole body compressed in a coding: the same bytes as brotliCompressSync or gzipSync with this module's settings. */
export function compressBuffer(body: Buffer, coding: Exclude<ContentCoding, 'identity'>): Buffer {
  return reused[coding]?.compress(body) ?? compressOnce(body, coding);
}

/** A compressing stream (for a streamed list, which may be large). */
export function compressingStream(coding: Exclude<ContentCoding, 'identity'>): Transform {
  return coding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : createGzip({ level: GZIP_LEVEL });
}

/** Media types worth compressing: text, JSON and JavaScript. Images and fonts already are. */
export const isCompressibleType = (contentType: string): boolean =>
  /^(text\/|application\/(json|x-ndjson|problem\+json|javascript)|[^;]*\+json)/.test(contentType);
