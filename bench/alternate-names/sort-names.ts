/** Every IRS SORT_NAME of the bundled BMF files, with its EIN and NAME, for the alternate_name bench. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';

export interface SortNameRow {
  ein: string;
  name: string;
  sortName: string;
}

export const IRS_DIRECTORY = join(DEFAULT_DATA_DIR, 'irs-eo-bmf');

/** Rows with a non-blank SORT_NAME, file by file in name order, as they are in each file. */
export function readSortNames(): SortNameRow[] {
  const rows: SortNameRow[] = [];
  for (const file of readdirSync(IRS_DIRECTORY).filter((file) => /^eo.*\.csv\.gz$/.test(file)).sort()) {
    const records = parse(gunzipSync(readFileSync(join(IRS_DIRECTORY, file))), { columns: true }) as Record<string, string>[];
    for (const record of records) {
      const sortName = record.SORT_NAME?.trim() ?? '';
      if (sortName !== '') rows.push({ ein: record.EIN!, name: record.NAME!, sortName });
    }
  }
  return rows;
}
