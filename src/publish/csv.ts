import { parse } from 'csv-parse';
import { describeFileError } from './source-paths.ts';
import { InputError, openTextInput } from './text-input.ts';
import type { InputOptions } from './text-input.ts';
import type { Readable } from 'node:stream';
import type { Diagnostics } from './diagnostics.ts';

export interface SourceRow {
  fields: Record<string, string>;
  /** 1-based line where the record ends, for messages. */
  line: number;
}

export interface Columns {
  required: readonly string[];
  /** Other columns the reader uses; any column in neither list draws a warning (a likely typo). */
  optional?: readonly string[];
}

/** No record may exceed this, so a stray quote cannot make the parser buffer a whole file. */
export const MAX_RECORD_BYTES = 1024 * 1024;

/** Checks a header row; returns false when the file cannot be read meaningfully. */
export function checkHeader(file: string, header: readonly string[], columns: Columns, diagnostics: Diagnostics): boolean {
  let usable = true;
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) {
      diagnostics.error({ file, line: 1, field: name }, `column "${name}" appears twice in the header`);
      usable = false;
    }
    seen.add(name);
  }
  for (const name of columns.required) {
    if (!seen.has(name)) {
      diagnostics.error({ file, line: 1, field: name }, `missing required column "${name}"`);
      usable = false;
    }
  }
  if (columns.optional !== undefined) {
    const known = new Set([...columns.required, ...columns.optional]);
    for (const name of header) {
      if (!known.has(name)) diagnostics.warning('unknown column', { file, line: 1, field: name }, `column "${name}" is not used (a typo?)`);
    }
  }
  return usable;
}

const OTHER_SEPARATORS = [
  { character: ';', name: 'semicolon' },
  { character: '\t', name: 'tab' },
  { character: '|', name: 'pipe' },
] as const;

/** The header line is quoted up to this many characters. */
const MAX_QUOTED_HEADER = 60;

/**
 * Why a header that lacks its columns when read as comma-separated is most likely another kind of
 * file: one whose header line splits into more columns on a semicolon, tab or pipe than on commas
 * (as spreadsheets save "CSV" where the comma is the decimal mark, or "text (tab-delimited)").
 * The file is not read with the guessed separator: a wrong guess would publish wrong data, and a
 * file that works here should work in other HSDS tools too.
 */
function otherSeparator(headerLine: string, header: readonly string[], columns: Columns): string | undefined {
  const lacksColumns = header.length === 1 || columns.required.some((name) => !header.includes(name));
  if (!lacksColumns) return undefined;
  let best: { name: string; count: number } | undefined;
  for (const { character, name } of OTHER_SEPARATORS) {
    const count = headerLine.split(character).length;
    if (count > header.length && count > (best?.count ?? 1)) best = { name, count };
  }
  if (best === undefined) return undefined;
  const shown = headerLine.replaceAll('\t', '\\t');
  const quoted = shown.length > MAX_QUOTED_HEADER ? `${shown.slice(0, MAX_QUOTED_HEADER)}…` : shown;
  return `the header looks ${best.name}-separated ("${quoted}"); save the file with commas as separators (CSV)`;
}

/** Keeps the first line of what a stream gives (up to a bound), as it goes by. */
function firstLineOf(input: Readable): () => string {
  let bytes = Buffer.alloc(0);
  const listen = (chunk: Buffer): void => {
    const newline = chunk.indexOf(0x0a);
    bytes = Buffer.concat([bytes, newline === -1 ? chunk : chunk.subarray(0, newline)]);
    if (newline !== -1 || bytes.length >= MAX_RECORD_BYTES) input.off('data', listen);
  };
  input.on('data', listen);
  return () => bytes.toString('utf8').replace(/^\uFEFF/u, '').replace(/\r$/u, '');
}

/**
 * Streams the records of a CSV file (plain, or gzip when the name ends in .gz) as header-keyed
 * objects. Problems go to `diagnostics` with their line: a record with the wrong number of columns
 * is skipped and reading goes on; a file that cannot be parsed further ends the stream.
 */
export async function* readCsv(file: string, columns: Columns, diagnostics: Diagnostics, options: InputOptions = {}): AsyncGenerator<SourceRow> {
  let headerSeen = false;
  let usable = true;
  let lastLine = 1;
  let wrongSeparator = false;
  const skipped: { message: string; line: number | undefined }[] = [];
  const parser = parse({
    columns: (header: string[]) => {
      headerSeen = true;
      const separator = otherSeparator(headerLine(), header, columns);
      if (separator === undefined) usable = checkHeader(file, header, columns, diagnostics);
      else {
        // One cause, one message: the columns it lacks and the quotes it trips on are not reported too.
        wrongSeparator = true;
        usable = false;
        skipped.length = 0;
        diagnostics.error({ file, line: 1 }, separator);
      }
      return header;
    },
    bom: true,
    info: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    on_skip: (error: (Error & { code?: string; lines?: number }) | undefined) => {
      if (error === undefined) return;
      // The parser cannot find the next record after a runaway field: stop, and report it once.
      if (error.code === 'CSV_MAX_RECORD_SIZE' || error.code === 'CSV_QUOTE_NOT_CLOSED') throw error;
      if (wrongSeparator) return;
      skipped.push({ message: describeCsvError(error), line: error.lines });
    },
  });
  const input = openTextInput(file, options);
  const headerLine = firstLineOf(input);
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      while (skipped.length > 0) {
        const problem = skipped.shift()!;
        diagnostics.error({ file, line: problem.line }, problem.message);
      }
      if (!usable) break;
      lastLine = info.lines;
      yield { fields: record, line: info.lines };
    }
    for (const problem of skipped) diagnostics.error({ file, line: problem.line }, problem.message);
    if (!headerSeen) diagnostics.error({ file }, 'the file is empty (expected a header row)');
  } catch (error) {
    for (const problem of skipped.splice(0)) diagnostics.error({ file, line: problem.line }, problem.message);
    const code = (error as { code?: string }).code;
    if (wrongSeparator && code?.startsWith('CSV_')) return;
    if (error instanceof InputError) diagnostics.error({ file, line: error.line }, error.message);
    else if (code === 'CSV_QUOTE_NOT_CLOSED' || code === 'CSV_MAX_RECORD_SIZE') {
      // The parser only notices at the end of the file (or of its buffer); the record began after the last good one.
      diagnostics.error({ file, line: lastLine + 1 }, `${describeCsvError(error as Error)}, in the record after line ${lastLine}`);
    } else if (code?.startsWith('CSV_')) diagnostics.error({ file, line: (error as { lines?: number }).lines }, describeCsvError(error as Error));
    else if ((error as { syscall?: string }).syscall !== undefined) diagnostics.error({ file }, describeFileError(error));
    else throw error;
  } finally {
    input.destroy();
  }
}

function describeCsvError(error: Error & { code?: string }): string {
  switch (error.code) {
    case 'CSV_RECORD_INCONSISTENT_COLUMNS':
      return `malformed CSV: ${error.message.replace(/ on line \d+$/, '')}`;
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'malformed CSV: a quoted field is never closed (unterminated quote)';
    case 'CSV_MAX_RECORD_SIZE':
      return `malformed CSV: a record is longer than ${MAX_RECORD_BYTES} bytes (probably an unterminated quote)`;
    default:
      return `malformed CSV: ${error.message}`;
  }
}

/** The trimmed value of a field, or undefined when it is empty. */
export function optional(fields: Record<string, string>, column: string): string | undefined {
  const value = fields[column]?.trim();
  return value === undefined || value === '' ? undefined : value;
}
