import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createDeflateRaw } from 'node:zlib';
import type { DeflateRaw } from 'node:zlib';
import { Zip, ZipPassThrough } from 'fflate';

/**
 * A ZIP entry deflated by Node's zlib, on libuv's threads, rather than by fflate's deflate, which
 * runs on the calling thread: fflate writes the archive's structure (headers, CRC-32, the central
 * directory) and zlib compresses, so a server making a package keeps its event loop for requests.
 * fflate's ZipPassThrough is made to be extended so: `push` takes the file's own bytes (counted and
 * checksummed), `process` hands on the compressed ones.
 */
class NativeDeflateEntry extends ZipPassThrough {
  readonly deflate: DeflateRaw;
  readonly ended: Promise<void>;

  constructor(name: string, modified: Date) {
    super(name);
    this.compression = 8;
    // ZIP keeps a time without a zone, which fflate reads off the Date in local time: shifted so that
    // local time reads UTC, every server writes the same bytes whatever its zone.
    this.mtime = new Date(modified.getTime() + modified.getTimezoneOffset() * 60_000);
    this.deflate = createDeflateRaw({ level: 6 });
    this.deflate.on('data', (chunk: Buffer) => this.ondata(null, chunk as Uint8Array<ArrayBuffer>, false));
    this.ended = new Promise((resolve, reject) => {
      this.deflate.once('end', () => {
        this.ondata(null, new Uint8Array(0), true);
        resolve();
      });
      this.deflate.once('error', reject);
    });
  }

  override process(chunk: Uint8Array, final: boolean): void {
    if (chunk.length > 0) this.deflate.write(chunk);
    if (final) this.deflate.end();
  }
}

/**
 * Zips the files of a folder, in the order given, into `target`, streaming: each file is read in
 * chunks and deflated as it is read, the archive written as it is made. Every entry gets the time
 * `modified` (the dataset's publish time), so the same files always make the same bytes.
 */
export async function zipFiles(directory: string, names: readonly string[], target: string, modified: Date): Promise<void> {
  const out = createWriteStream(target);
  let failure: Error | undefined;
  out.on('error', (error) => (failure ??= error));
  const zip = new Zip((error, chunk, final) => {
    if (error !== null) failure ??= error;
    else out.write(chunk);
    if (final) out.end();
  });
  const finished = once(out, 'finish');
  for (const name of names) {
    const entry = new NativeDeflateEntry(name, modified);
    zip.add(entry);
    for await (const chunk of createReadStream(join(directory, name), { highWaterMark: 256 * 1024 })) {
      entry.push(chunk as Uint8Array);
      if (failure !== undefined) throw failure;
      if (entry.deflate.writableNeedDrain) await once(entry.deflate, 'drain');
      if (out.writableNeedDrain) await once(out, 'drain');
    }
    entry.push(new Uint8Array(0), true);
    await entry.ended;
  }
  zip.end();
  await finished;
  if (failure !== undefined) throw failure;
}
