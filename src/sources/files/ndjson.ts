import { MAX_RECORD_BYTES } from './csv.ts';
import type { Columns, SourceRow } from './csv.ts';
import { inputFailure, openTextInput } from './text-input.ts';
import type { InputOptions } from './text-input.ts';
import type { Diagnostics } from './diagnostics.ts';

/**
 * Streams an NDJSON file (one JSON object per line; blank lines ignored) as rows of string fields,
 * the same shape the CSV reader gives. Numbers and booleans become their text; null is empty.
 * A line that is not a JSON object, or lacks a required field, is reported and skipped.
 */
export async function* readNdjson(file: string, columns: Columns, diagnostics: Diagnostics, options: InputOptions = {}): AsyncGenerator<SourceRow> {
  const input = openTextInput(file, options);
  const known = columns.optional === undefined ? undefined : new Set([...columns.required, ...columns.optional]);
  const reportedUnknown = new Set<string>();
  let line = 0;
  let nonBlankLines = 0;
  let pending = '';

  const toRow = (text: string): SourceRow | undefined => {
    line++;
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return undefined;
    nonBlankLines++;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      diagnostics.error({ file, line }, `not valid JSON: ${(error as Error).message}`);
      return undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      diagnostics.error({ file, line }, 'each line must be one JSON object');
      return undefined;
    }
    const fields: Record<string, string> = {};
    let ok = true;
    for (const [key, raw] of Object.entries(value)) {
      if (known !== undefined && !known.has(key) && !reportedUnknown.has(key)) {
        reportedUnknown.add(key);
        diagnostics.warning('unknown column', { file, line, field: key }, `field "${key}" is not used (a typo?)`);
      }
      if (raw === null) fields[key] = '';
      else if (typeof raw === 'string') fields[key] = raw;
      else if (typeof raw === 'number' && Number.isInteger(raw) && !Number.isSafeInteger(raw)) {
        diagnostics.error({ file, line, field: key }, 'is a number too large to keep exactly; write it as a string');
        ok = false;
      } else if (typeof raw === 'number' || typeof raw === 'boolean') fields[key] = String(raw);
      else {
        diagnostics.error({ file, line, field: key }, 'must be a string, number, boolean or null');
        ok = false;
      }
    }
    for (const name of columns.required) {
      if (!(name in fields)) {
        diagnostics.error({ file, line, field: name }, `missing required field "${name}"`);
        ok = false;
      }
    }
    return ok ? { fields, line } : undefined;
  };

  const tooLong = () => diagnostics.error({ file, line: line + 1 }, `a line is longer than ${MAX_RECORD_BYTES} characters`);
  try {
    // The UTF-8 guard passes only whole characters, so each chunk decodes on its own.
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const text = pending + chunk.toString('utf8');
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        // A line that ended within this chunk is held to the limit as one still being read is, below.
        if (end - start > MAX_RECORD_BYTES) return tooLong();
        const row = toRow(text.slice(start, end));
        start = end + 1;
        if (row !== undefined) yield row;
      }
      pending = text.slice(start);
      if (pending.length > MAX_RECORD_BYTES) return tooLong();
    }
    if (pending !== '') {
      const row = toRow(pending);
      if (row !== undefined) yield row;
    }
    if (nonBlankLines === 0) diagnostics.error({ file }, 'the file is empty');
  } catch (error) {
    const failure = inputFailure(error);
    if (failure === undefined) throw error;
    diagnostics.error({ file, line: failure.line }, failure.message);
  } finally {
    input.destroy();
  }
}
