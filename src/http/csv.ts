import type { Batches } from '../store/store.ts';

/**
 * A list as CSV (RFC 4180): UTF-8, a header row, one row per item, CRLF line ends, a field quoted
 * when it holds a comma, a quote or a line break. A text that a spreadsheet would run as a formula
 * (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) is written after a single quote
 * (`'=1+1`), as OWASP advises for CSV exports: shown as text, never evaluated.
 */

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

/** A column: its name in the header row, and its value in an item as served. */
export interface CsvColumn {
  name: string;
  value(item: Record<string, unknown>): unknown;
}

/** The column of a field of the item, as it is. */
export const field = (name: string): CsvColumn => ({ name, value: (item) => item[name] });

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One field as data: empty for a missing value, numbers as written, text quoted as needed, nothing changed. */
export function plainCsvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One field for a spreadsheet: as plainCsvField, a text a spreadsheet would run as a formula neutralised. */
export function csvField(value: unknown): string {
  return typeof value === 'string' && FORMULA_START.test(value) ? plainCsvField(`'${value}`) : plainCsvField(value);
}

const row = (fields: unknown[]): string => `${fields.map(csvField).join(',')}\r\n`;

/** The header row, then each batch of items (rendered JSON) as rows. */
export async function* csvLines(columns: readonly CsvColumn[], batches: Batches): AsyncGenerator<string> {
  yield row(columns.map((column) => column.name));
  for await (const batch of batches) {
    yield batch
      .map((json) => {
        const item = JSON.parse(json) as Record<string, unknown>;
        return row(columns.map((column) => column.value(item)));
      })
      .join('');
  }
}
