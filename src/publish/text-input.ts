import { closeSync, constants, createReadStream, fstatSync, openSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { PassThrough, Transform } from 'node:stream';
import type { TransformCallback, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { notRegularFile } from './source-paths.ts';

/** A problem with the bytes of an input file, before any row is parsed. */
export class InputError extends Error {
  readonly line: number | undefined;

  constructor(message: string, line?: number) {
    super(message);
    this.line = line;
  }
}

export interface InputOptions {
  /** Called with the number of bytes read from disk (compressed bytes for .gz), for progress. */
  onBytes?: (bytes: number) => void;
}

const NEWLINE = 0x0a;

function countNewlines(chunk: Buffer, end = chunk.length): number {
  let count = 0;
  for (let at = chunk.indexOf(NEWLINE); at !== -1 && at < end; at = chunk.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/** Length of an incomplete UTF-8 sequence at the end of `chunk` (0 to 3 bytes), kept for the next chunk. */
function incompleteTail(chunk: Buffer): number {
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const byte = chunk[chunk.length - back]!;
    if ((byte & 0xc0) !== 0x80) {
      const expected = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return expected > back ? back : 0;
    }
  }
  return 0;
}

/**
 * Passes bytes through unchanged, failing with the line number at the first byte sequence that is
 * not UTF-8 (rather than letting a decoder silently turn it into U+FFFD).
 */
class Utf8Guard extends Transform {
  private carry = Buffer.alloc(0);
  private linesBefore = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const complete = bytes.length - incompleteTail(bytes);
    const body = bytes.subarray(0, complete);
    if (!isUtf8(body)) {
      done(this.invalidAt(body));
      return;
    }
    this.linesBefore += countNewlines(body);
    this.carry = Buffer.from(bytes.subarray(complete));
    done(null, body);
  }

  override _flush(done: TransformCallback): void {
    if (this.carry.length > 0) done(new InputError('the file is not valid UTF-8 (it ends inside a character)', this.linesBefore + 1));
    else done();
  }

  private invalidAt(body: Buffer): InputError {
    let lineStart = 0;
    let line = this.linesBefore + 1;
    for (let end = body.indexOf(NEWLINE); ; end = body.indexOf(NEWLINE, lineStart)) {
      const stop = end === -1 ? body.length : end;
      if (!isUtf8(body.subarray(lineStart, stop))) break;
      if (end === -1) break;
      lineStart = end + 1;
      line++;
    }
    return new InputError('the file is not valid UTF-8 (save it as UTF-8)', line);
  }
}

/** Opening never waits (a named pipe would block until a writer came) and never takes a terminal over. */
const NON_BLOCKING_READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens a source file for reading; an InputError when it is not a regular file. Sources are checked
 * when they are found; this also covers a file swapped for something else since.
 */
export function openSourceFile(file: string): number {
  const descriptor = openSync(file, NON_BLOCKING_READ);
  const problem = notRegularFile(fstatSync(descriptor));
  if (problem === undefined) return descriptor;
  closeSync(descriptor);
  throw new InputError(problem);
}

/** The bytes of a file (gunzipped when it ends in .gz), checked to be UTF-8. */
export function openTextInput(file: string, options: InputOptions = {}): Readable {
  let descriptor: number;
  try {
    descriptor = openSourceFile(file);
  } catch (error) {
    // Reported as the stream's error, as a failed read would be.
    const failed = new PassThrough();
    failed.destroy(error as Error);
    return failed;
  }
  const raw = createReadStream(file, { fd: descriptor, highWaterMark: 256 * 1024 });
  if (options.onBytes !== undefined) {
    const onBytes = options.onBytes;
    raw.on('data', (chunk) => onBytes(chunk.length));
  }
  const guard = new Utf8Guard();
  raw.on('error', (error) => guard.destroy(error));
  // Whoever stops reading destroys the guard; that must close the file (and the decompressor) too.
  guard.once('close', () => raw.destroy());
  if (/\.gz$/i.test(file)) {
    const gunzip = createGunzip();
    gunzip.on('error', (error) => guard.destroy(new InputError(`cannot decompress: ${error.message}`)));
    guard.once('close', () => gunzip.destroy());
    return raw.pipe(gunzip).pipe(guard);
  }
  return raw.pipe(guard);
}
