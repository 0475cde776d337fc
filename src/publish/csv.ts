import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import type { Readable } from 'node:stream';

export interface CsvRow {
  fields: Record<string, string>;
  /** 1-based line where the record ends, for error messages. */
  line: number;
}

export class SourceError extends Error {
  readonly file: string;
  readonly line: number | undefined;

  constructor(file: string, line: number | undefined, message: string) {
    super(`${basename(file)}${line === undefined ? '' : `:${line}`}: ${message}`);
    this.file = file;
    this.line = line;
  }
}

/** Streams the rows of a CSV file (plain, or gzip when the name ends in .gz) as header-keyed objects. */
export async function* readCsv(file: string, requiredColumns: readonly string[] = []): AsyncGenerator<CsvRow> {
  let input: Readable = createReadStream(file);
  if (file.endsWith('.gz')) input = input.pipe(createGunzip());
  const parser = input.pipe(parse({ columns: true, bom: true, info: true, skip_empty_lines: true }));
  let checkedHeader = false;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      if (!checkedHeader) {
        const missing = requiredColumns.filter((column) => !(column in record));
        if (missing.length > 0) throw new SourceError(file, 1, `missing required column(s): ${missing.join(', ')}`);
        checkedHeader = true;
      }
      yield { fields: record, line: info.lines };
    }
  } catch (error) {
    if (error instanceof SourceError) throw error;
    const line = (error as { lines?: number }).lines;
    throw new SourceError(file, line, (error as Error).message);
  }
}

/** The trimmed value of a field, or undefined when it is empty. */
export function optional(fields: Record<string, string>, column: string): string | undefined {
  const value = fields[column]?.trim();
  return value === undefined || value === '' ? undefined : value;
}
