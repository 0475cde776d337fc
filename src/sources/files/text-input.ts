import { closeSync, constants, createReadStream, fstatSync, openSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { PassThrough, Transform } from 'node:stream';
import type { TransformCallback, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { describeFileError, notRegularFile } from './source-paths.ts';

/** A problem with the bytes of an input file, before any row is parsed. */
export class InputError extends Error {
  readonly line: number | undefined;

  constructor(message: string, line?: number) {
    super(message);
    this.line = line;
  }
}

/**
 * Where and why reading a text input stopped, when the input is to blame: its content (an
 * InputError, with its line) or the file (it cannot be read). Undefined for any other failure, a bug.
 */
export function inputFailure(error: unknown): { line: number | undefined; message: string } | undefined {
  if (error instanceof InputError) return { line: error.line, message: error.message };
  if ((error as { syscall?: string }).syscall !== undefined) return { line: undefined, message: describeFileError(error) };
  return undefined;
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
 * The first bytes are held until there are this many (or the file ends), to see a byte-order mark.
 * The start is then checked for UTF-16 in up to START_BYTES: a first read is that long unless the
 * file is shorter, so holding more would only delay small files.
 */
const MIN_START_BYTES = 4;
const START_BYTES = 1024;

/** How much of the line before a bad byte is kept, to quote it. */
const CONTEXT_BYTES = 64;

/** Why a file that starts with these bytes is not UTF-8 at all, or undefined when it may be. */
function wrongEncodingAtStart(start: Buffer): string | undefined {
  const startsWith = (...bytes: number[]): boolean => bytes.every((byte, index) => start[index] === byte);
  if (startsWith(0xff, 0xfe, 0x00, 0x00) || startsWith(0x00, 0x00, 0xfe, 0xff)) {
    return 'the file is UTF-32 (it starts with a UTF-32 byte-order mark); save it as UTF-8';
  }
  if (startsWith(0xff, 0xfe) || startsWith(0xfe, 0xff)) return 'the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8';
  // UTF-16 without a byte-order mark: plain-ASCII text has a zero in every other byte (odd bytes
  // in little-endian, even bytes in big-endian). Zero bytes are valid UTF-8, so this is checked apart.
  const pairs = Math.floor(start.length / 2);
  if (pairs < 2) return undefined;
  let zeroEven = 0;
  let zeroOdd = 0;
  for (let at = 0; at < pairs * 2; at += 2) {
    if (start[at] === 0) zeroEven++;
    if (start[at + 1] === 0) zeroOdd++;
  }
  const mostly = (count: number): boolean => count >= pairs * 0.5;
  const hardly = (count: number): boolean => count <= pairs * 0.05;
  if ((mostly(zeroOdd) && hardly(zeroEven)) || (mostly(zeroEven) && hardly(zeroOdd))) {
    return 'the file looks UTF-16 (every other byte is zero); save it as UTF-8';
  }
  return undefined;
}

/** Offset of the first byte that does not begin a valid UTF-8 sequence, or -1 when all are valid. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    if (lead < 0x80) {
      at++;
      continue;
    }
    const following = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : 0;
    if (following === 0 || at + following >= bytes.length) return at;
    // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
    const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    const second = bytes[at + 1]!;
    if (second < low || second > high) return at;
    for (let next = 2; next <= following; next++) {
      const byte = bytes[at + next]!;
      if (byte < 0x80 || byte > 0xbf) return at;
    }
    at += following + 1;
  }
  return -1;
}

const windows1252 = new TextDecoder('windows-1252');
/** What ends a word around a bad byte: a separator, a quote or a space. */
const WORD_END = /[\s,;|"]/u;
const WORD_END_BYTES = new Set([0x09, 0x0a, 0x0d, 0x20, 0x2c, 0x3b, 0x7c, 0x22]);
const MAX_QUOTED = 30;

/**
 * Says why a byte is not UTF-8, quoting the text before it. A byte that is a character in
 * Windows-1252 (which includes the printable part of Latin-1, ISO-8859-1), such as 0xE9 "é", is
 * most likely just that: the file was saved in that encoding, the default of many Windows tools.
 * @param before the valid UTF-8 bytes of the line before the bad byte (its end, at least)
 * @param from the bytes of the line from the bad byte on
 */
function describeInvalidByte(before: Uint8Array, from: Uint8Array): string {
  const byte = from[0]!;
  const hex = `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  const text = Buffer.from(before.subarray(Math.max(0, before.length - CONTEXT_BYTES))).toString('utf8').replace(/^\uFFFD+/u, '');
  let wordStart = text.length;
  while (wordStart > 0 && !WORD_END.test(text[wordStart - 1]!)) wordStart--;
  const word = text.slice(wordStart);
  const after = word !== '' ? word : text.slice(-12);
  const where = after === '' ? `byte ${hex} at the start of the line` : `byte ${hex} after "${after.slice(-MAX_QUOTED)}"`;
  const asLatin1 = windows1252.decode(from.subarray(0, 1));
  if (/\p{Cc}/u.test(asLatin1)) return `the file is not valid UTF-8: ${where} is not a character in UTF-8 or Latin-1/Windows-1252; save it as UTF-8`;
  let wordEnd = 0;
  while (wordEnd < from.length && wordEnd < MAX_QUOTED && !WORD_END_BYTES.has(from[wordEnd]!)) wordEnd++;
  const guess = `${word}${windows1252.decode(from.subarray(0, wordEnd))}`.slice(-MAX_QUOTED);
  return `the file is not UTF-8: ${where} looks like Latin-1/Windows-1252 ("${guess}"); save it as UTF-8`;
}

/**
 * Passes bytes through unchanged, failing with the line number at the first byte sequence that is
 * not UTF-8 (rather than letting a decoder silently turn it into U+FFFD). The message says what the
 * file more likely is: UTF-16 (told from its first bytes), or Latin-1/Windows-1252. Besides an
 * unfinished character, only the end of the current line is kept, whatever the size of the file.
 */
class Utf8Guard extends Transform {
  private carry = Buffer.alloc(0);
  private linesBefore = 0;
  /** The first bytes, until MIN_START_BYTES are in; undefined once the start has been checked. */
  private start: Buffer | undefined = Buffer.alloc(0);
  /** The end of the line passed so far (up to CONTEXT_BYTES), to quote before a bad byte. */
  private lineTail = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.start !== undefined) {
      const start = Buffer.concat([this.start, chunk]);
      if (start.length < MIN_START_BYTES) {
        this.start = start;
        done();
        return;
      }
      this.start = undefined;
      const wrong = wrongEncodingAtStart(start.subarray(0, START_BYTES));
      if (wrong !== undefined) {
        done(new InputError(wrong, 1));
        return;
      }
      chunk = start;
    }
    this.pass(chunk, done);
  }

  private pass(chunk: Buffer, done: TransformCallback): void {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const complete = bytes.length - incompleteTail(bytes);
    const body = bytes.subarray(0, complete);
    if (!isUtf8(body)) {
      done(this.invalidAt(body));
      return;
    }
    this.linesBefore += countNewlines(body);
    this.keepLineTail(body);
    this.carry = Buffer.from(bytes.subarray(complete));
    done(null, body);
  }

  override _flush(done: TransformCallback): void {
    if (this.start !== undefined) {
      const start = this.start;
      this.start = undefined;
      const wrong = wrongEncodingAtStart(start);
      if (wrong !== undefined) {
        done(new InputError(wrong, 1));
        return;
      }
      if (start.length > 0) {
        this.pass(start, (error, body) => {
          if (error) done(error);
          else {
            if (body !== undefined) this.push(body);
            this.finish(done);
          }
        });
        return;
      }
    }
    this.finish(done);
  }

  private finish(done: TransformCallback): void {
    const line = this.linesBefore + 1;
    // One odd byte at the very end is most likely a Latin-1 character; a longer unfinished sequence, a cut file.
    if (this.carry.length === 1) done(new InputError(describeInvalidByte(this.lineTail, this.carry), line));
    else if (this.carry.length > 0) done(new InputError('the file is not valid UTF-8 (it ends inside a character)', line));
    else done();
  }

  private keepLineTail(body: Buffer): void {
    const lastNewline = body.lastIndexOf(NEWLINE);
    if (lastNewline !== -1 || body.length >= CONTEXT_BYTES) {
      const from = Math.max(lastNewline + 1, body.length - CONTEXT_BYTES);
      this.lineTail = Buffer.from(body.subarray(from));
    } else {
      const joined = Buffer.concat([this.lineTail, body]);
      this.lineTail = joined.subarray(Math.max(0, joined.length - CONTEXT_BYTES));
    }
  }

  private invalidAt(body: Buffer): InputError {
    let lineStart = 0;
    let line = this.linesBefore + 1;
    let stop = body.length;
    for (let end = body.indexOf(NEWLINE); ; end = body.indexOf(NEWLINE, lineStart)) {
      stop = end === -1 ? body.length : end;
      if (!isUtf8(body.subarray(lineStart, stop))) break;
      if (end === -1) break;
      lineStart = end + 1;
      line++;
    }
    const text = body.subarray(lineStart, stop);
    const bad = Math.max(0, firstInvalidUtf8(text));
    const before = lineStart === 0 ? Buffer.concat([this.lineTail, text.subarray(0, bad)]) : text.subarray(0, bad);
    return new InputError(describeInvalidByte(before, text.subarray(bad)), line);
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
