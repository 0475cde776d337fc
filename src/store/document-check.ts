import { crc32 } from 'node:zlib';
import { StoreUnavailable } from './store.ts';
import type { Fragments } from './packed-documents.ts';

/**
 * Every JSON document a store serves is kept beside a check of its bytes (a column `<json>_crc`, see
 * tables.ts), and a read compares the two before the document goes anywhere: a file altered after
 * the server verified it whole at open (a failing disk, an edit in place) answers 503, never altered
 * bytes. CRC-32 finds every change within 4 consecutive bytes and all but one in 2^32 of any other,
 * at about a microsecond per document (bench/document-check.ts; docs/performance.md, "Snapshot
 * verification").
 * Kept as a signed 32-bit integer: PostgreSQL's `integer` has no unsigned form.
 */
export const documentCheck = (json: string): number => crc32(json) | 0;

/** A stored document whose bytes no longer match their check. */
export class AlteredDocument extends Error {}

/** `json` as read, once it matches `check`; else an AlteredDocument naming where it was read from. */
export function verifiedDocument(json: string, check: number, where: string): string {
  if (documentCheck(json) !== check) throw new AlteredDocument(`a document read from ${where} does not match its stored check (altered since it was written)`);
  return json;
}

/**
 * The document of a row as stored, verified and unpacked (see packed-documents.ts): a JSON column and
 * its check, and for a full organization its details and their check.
 */
export function verifiedRow(fragments: Fragments, where: string, json: string, crc: number, details?: string, detailsCrc?: number): string {
  const stored = verifiedDocument(json, crc, where);
  if (details === undefined) return fragments.unpack(stored, where);
  return fragments.organization(stored, verifiedDocument(details, detailsCrc!, where), where);
}

/** Rows of [JSON, check] or [JSON, check, details, check] (as arrays, from `first` on), verified: the document of each. */
export function verifiedColumns(rows: readonly unknown[], where: string, fragments: Fragments, first = 0): string[] {
  return (rows as unknown as unknown[][]).map((row) =>
    verifiedRow(fragments, where, row[first] as string, row[first + 1] as number, row[first + 2] as string | undefined, row[first + 3] as number | undefined),
  );
}

/** A document as PostgreSQL answers it. */
export interface CheckedRow {
  json: string;
  crc: number;
  details?: string;
  details_crc?: number;
}

/**
 * Rows of `json` and `crc` (and `details`), verified: the document of each. A document of PostgreSQL
 * that does not match its check is a StoreUnavailable (a 503 for that request), as the database
 * answers it so.
 */
export function verifiedRows(rows: readonly CheckedRow[], where: string, fragments: Fragments): string[] {
  try {
    return rows.map((row) => verifiedRow(fragments, where, row.json, row.crc, row.details ?? undefined, row.details_crc ?? undefined));
  } catch (error) {
    throw new StoreUnavailable(`the database holds an altered document: ${(error as Error).message}`, { cause: error });
  }
}
