import { parse } from 'csv-parse';
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { CsvWorker } from './csv-thread.ts';
import { inputFailure, openTextInput } from './text-input.ts';
import type { InputOptions } from './text-input.ts';
import type { Readable } from 'node:stream';
import { counted } from '../../text.ts';
import type { Diagnostics } from './diagnostics.ts';

export interface SourceRow {
  fields: Record<string, string>;
  /** 1-based line where the record ends, for messages. */
  line: number;
  /** Where a record read from JSON is in its document, as a JSON path (`$.contents[4]`): messages name it instead of the line. */
  path?: string;
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
 * What parsing a CSV file yields, in order: its header (with the reason it is most likely not
 * comma-separated, if so), its records (only the columns a reader declares), and problems at a line:
 * a record skipped, or the one that ended the parse (always last).
 */
export type CsvEvent =
  | { kind: 'header'; header: string[]; otherSeparator: string | undefined }
  | { kind: 'row'; row: SourceRow }
  | { kind: 'problem'; line: number | undefined; message: string; fatal?: true };

/**
 * Parses a CSV file (plain, or gzip when the name ends in .gz) into CsvEvents. Nothing is reported
 * here, so the same events can come from a worker thread; failures it cannot place in the file
 * (none but bugs) are thrown.
 */
export async function* parseCsv(file: string, columns: Columns, options: InputOptions = {}): AsyncGenerator<CsvEvent> {
  let header: string[] | undefined;
  let wrongSeparator = false;
  /** Where each column a reader uses is in a record, by name. */
  let kept: [string, number][] = [];
  let lastLine = 1;
  // Problems and the header wait for the next record, so that a header found to be of another kind can drop the problems before it.
  const pending: CsvEvent[] = [];
  const takeHeader = (names: string[], separator: string | undefined) => {
    header = names;
    // One cause, one message: the columns it lacks and the quotes it trips on are not reported too.
    wrongSeparator = separator !== undefined;
    if (wrongSeparator) pending.length = 0;
    const declared = new Set([...columns.required, ...(columns.optional ?? [])]);
    kept = names.flatMap((name, index): [string, number][] => (declared.has(name) ? [[name, index]] : []));
    pending.push({ kind: 'header', header: names, otherSeparator: separator });
  };
  // Records come as arrays (objects cost the parser a third more): the first is the header.
  const parser = parse({
    bom: true,
    info: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    // With `info`, each record reaches on_record wrapped with it (csv-parse's types miss that).
    on_record: ((wrapped: { record: string[]; info: { lines: number } }): SourceRow | null => {
      const { record, info } = wrapped;
      if (header === undefined) {
        takeHeader(record, otherSeparator(headerLine(), record, columns));
        return null;
      }
      // Only the columns a reader uses cross to the thread that reads the rows.
      const fields: Record<string, string> = {};
      for (const [name, index] of kept) fields[name] = record[index]!;
      return { fields, line: info.lines };
    }) as unknown as (record: string[]) => string[],
    on_skip: (error: (Error & { code?: string; lines?: number; record?: unknown[] }) | undefined) => {
      if (error === undefined) return;
      // A header the parser cannot read is most likely of another kind of file (quoted fields and semicolons, say).
      if (header === undefined) {
        const separator = otherSeparator(headerLine(), [], columns);
        if (separator !== undefined) takeHeader([], separator);
      }
      // The parser cannot find the next record after a runaway field: stop, and report it once.
      if (error.code === 'CSV_MAX_RECORD_SIZE' || error.code === 'CSV_QUOTE_NOT_CLOSED') throw error;
      if (!wrongSeparator) pending.push({ kind: 'problem', line: error.lines, message: describeCsvError(error, header?.length) });
    },
  });
  const input = openTextInput(file, options);
  const headerLine = firstLineOf(input);
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  try {
    for await (const row of parser as AsyncIterable<SourceRow>) {
      yield* pending.splice(0);
      lastLine = row.line;
      yield { kind: 'row', row };
    }
    yield* pending.splice(0);
  } catch (error) {
    yield* pending.splice(0);
    const failure = describeFailure(error as Error & { code?: string; lines?: number; syscall?: string }, wrongSeparator, lastLine);
    if (failure === undefined) throw error;
    if (failure.message !== '') yield { kind: 'problem', ...failure, fatal: true };
  } finally {
    input.destroy();
  }
}

/** Where and why a parse stopped; an empty message when it needs none; undefined for a failure that is not the file's. */
function describeFailure(error: Error & { code?: string; lines?: number; syscall?: string }, wrongSeparator: boolean, lastLine: number) {
  const code = error.code;
  if (wrongSeparator && code?.startsWith('CSV_')) return { line: undefined, message: '' };
  if (code === 'CSV_QUOTE_NOT_CLOSED' || code === 'CSV_MAX_RECORD_SIZE') {
    // The parser only notices at the end of the file (or of its buffer); the record began after the last good one.
    return { line: lastLine + 1, message: `${describeCsvError(error)}, in the record after line ${lastLine}` };
  }
  if (code?.startsWith('CSV_')) return { line: error.lines, message: describeCsvError(error) };
  return inputFailure(error);
}

/** Files from this size on disk are parsed on a worker thread, where there is a second core. */
export const PARSE_IN_WORKER_FROM_BYTES = 256 * 1024;

function worthAWorker(file: string): boolean {
  if (availableParallelism() < 2) return false;
  try {
    return statSync(file).size >= PARSE_IN_WORKER_FROM_BYTES;
  } catch {
    // The parse reports why the file cannot be read.
    return false;
  }
}

/**
 * Streams the records of a CSV file as header-keyed objects (of the columns in `columns`).
 * Problems go to `diagnostics` with their line: a record with the wrong number of columns is skipped
 * and reading goes on; a file that cannot be parsed further ends the stream. Large files are parsed
 * on a worker thread while this one uses the rows.
 */
export async function* readCsv(file: string, columns: Columns, diagnostics: Diagnostics, options: CsvOptions = {}): AsyncGenerator<SourceRow> {
  const inWorker = options.parseInWorker ?? worthAWorker(file);
  const events = inWorker ? CsvWorker.get().read(file, columns, options) : parseCsv(file, columns, options);
  let headerSeen = false;
  let usable = true;
  let failed = false;
  for await (const event of events) {
    if (event.kind === 'header') {
      headerSeen = true;
      if (event.otherSeparator === undefined) usable = checkHeader(file, event.header, columns, diagnostics);
      else {
        usable = false;
        diagnostics.error({ file, line: 1 }, event.otherSeparator);
      }
    } else if (event.kind === 'problem') {
      failed ||= event.fatal === true;
      diagnostics.error({ file, line: event.line }, event.message);
    } else if (!usable) return;
    else yield event.row;
  }
  if (!headerSeen && !failed) diagnostics.error({ file }, 'the file is empty (expected a header row)');
}

export interface CsvOptions extends InputOptions {
  /** Parse on a worker thread (true) or this one (false), whatever the file's size; for tests. */
  parseInWorker?: boolean;
}

function describeCsvError(error: Error & { code?: string; record?: unknown[] }, headerLength?: number): string {
  switch (error.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return `malformed CSV: ${counted(error.record?.length ?? 0, 'field')} where the header has ${headerLength}`;
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
