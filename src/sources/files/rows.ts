import { readCsv } from './csv.ts';
import type { Columns, SourceRow } from './csv.ts';
import { readNdjson } from './ndjson.ts';
import type { ReadContext } from '../source.ts';

export const TABULAR_FILE = /\.(csv|ndjson|jsonl)(\.gz)?$/i;

/** The rows of a CSV or NDJSON file (either optionally gzipped), chosen by its extension. */
export function readRows(file: string, columns: Columns, context: ReadContext): AsyncGenerator<SourceRow> {
  const options = { onBytes: context.onBytes };
  return /\.(ndjson|jsonl)(\.gz)?$/i.test(file)
    ? readNdjson(file, columns, context.diagnostics, options)
    : readCsv(file, columns, context.diagnostics, options);
}
