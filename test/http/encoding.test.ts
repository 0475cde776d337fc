import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { compressBuffer, reusesStream } from '../../src/http/encoding.ts';

/** What node:zlib's one-shot functions make with the settings encoding.ts documents (brotli quality 4, window no larger than the body; gzip level 6). */
function oneShot(body: Buffer, coding: 'br' | 'gzip'): Buffer {
  if (coding === 'gzip') return gzipSync(body, { level: 6 });
  const windowBits = Math.min(constants.BROTLI_MAX_WINDOW_BITS, Math.max(constants.BROTLI_MIN_WINDOW_BITS + 6, Math.ceil(Math.log2(body.length + 1))));
  return brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_LGWIN]: windowBits, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
}

/** Bytes that do not compress, the same on every run. */
function noise(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  return bytes;
}

const page = (items: number) =>
  Buffer.from(JSON.stringify({ total_items: items, contents: Array.from({ length: items }, (_, i) => ({ id: `org-${i}`, name: `Organization ${i}`, description: 'Food, shelter and advice. '.repeat(i % 7) })) }));

describe('compressBuffer', () => {
  it('reuses one zlib stream per coding on this Node (no stream per call to be promoted, see ReusedCompressor)', () => {
    assert.equal(reusesStream('br'), true);
    assert.equal(reusesStream('gzip'), true);
  });

  it('makes the same bytes as node:zlib one-shot compression, call after call, whatever came before', () => {
    // Empty, small, page-sized and large text; bytes that do not compress, larger than one write's output.
    const bodies = [Buffer.alloc(0), Buffer.from('{}'), page(20), page(2000), noise(200_000, 7), page(3), noise(100, 9), page(20)];
    for (const coding of ['br', 'gzip'] as const) {
      // In order, then in reverse, so each body follows a different one.
      for (const body of [...bodies, ...bodies.reverse()]) {
        const compressed = compressBuffer(body, coding);
        assert.ok(compressed.equals(oneShot(body, coding)), `${coding}, ${body.length} bytes`);
        assert.ok((coding === 'br' ? brotliDecompressSync(compressed) : gunzipSync(compressed)).equals(body), `${coding}, ${body.length} bytes`);
      }
    }
  });

  it('gives each call a body of its own, which later calls do not overwrite', () => {
    const first = page(20);
    const second = page(21);
    for (const coding of ['br', 'gzip'] as const) {
      const a = compressBuffer(first, coding);
      const kept = Buffer.from(a);
      compressBuffer(second, coding);
      compressBuffer(noise(100_000, 3), coding);
      assert.ok(a.equals(kept), coding);
    }
  });
});
