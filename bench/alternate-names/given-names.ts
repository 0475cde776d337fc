/**
 * Derives the given names that src/sources/irs-given-names.ts lists, from the bundled IRS files
 * themselves: the first word of the in-care-of lines (ICO) written `% GIVEN SURNAME` or
 * `% GIVEN I SURNAME`. A word is kept when it starts at least 10 such lines (or 3 with a middle
 * initial, a shape organizations rarely have) and occurs in NAME at most twice as often as it starts
 * them (so JOHN is kept, CHRISTIAN and VIRGINIA are not); NOT_GIVEN_NAMES are words that pass
 * that test but are care-of offices or Shrine temples, found by reading the list.
 *
 * `node bench/alternate-names/given-names.ts > src/sources/irs-given-names.ts`
 * Only single words are printed, never an ICO line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { IRS_DIRECTORY } from './sort-names.ts';

const NOT_GIVEN_NAMES = new Set(
  ('ACCOUNTS AERIE ALGERIA ALMAS APIC ARAB ATTN AVESTA BEDOUIN BOKF COMPUCOUNT CURRENT EXECUTIVE FINANCE FISCAL KORA ' +
    'KOREIN MADAM MIDIAN MIRZA MWPHGL ORGANIZATIONAL OSIRIS PASTOR PATHFINDER PAYROLL RIZPAH SECRETARY TANGIER TAX TD ' +
    'TEHAMA WESBANCO ZONA').split(' '),
);

const starts = new Map<string, number>();
const startsBeforeInitial = new Map<string, number>();
const inNames = new Map<string, number>();
const count = (counts: Map<string, number>, word: string) => counts.set(word, (counts.get(word) ?? 0) + 1);

for (const file of readdirSync(IRS_DIRECTORY).filter((file) => /^eo.*\.csv\.gz$/.test(file))) {
  const records = parse(gunzipSync(readFileSync(join(IRS_DIRECTORY, file))), { columns: true }) as Record<string, string>[];
  for (const record of records) {
    for (const word of new Set(record.NAME!.split(/\s+/))) count(inNames, word);
    const careOf = /^% ([A-Z]{2,})( [A-Z])? [A-Z'-]{2,}$/.exec(record.ICO!.trim());
    if (careOf === null) continue;
    count(starts, careOf[1]!);
    if (careOf[2] !== undefined) count(startsBeforeInitial, careOf[1]!);
  }
}

const names = [...starts]
  .filter(([word, lines]) => (lines >= 10 || (startsBeforeInitial.get(word) ?? 0) >= 3) && (inNames.get(word) ?? 0) <= 2 * lines)
  .map(([word]) => word)
  .filter((word) => !NOT_GIVEN_NAMES.has(word))
  .sort();

const lines: string[] = [];
let line = '';
for (const name of names) {
  if (line.length + name.length + 1 > 110) {
    lines.push(line);
    line = '';
  }
  line += (line === '' ? '' : ' ') + name;
}
lines.push(line);

process.stdout.write(`/**
 * Given names, for the person-name shapes of irs-sort-name.ts: the first words of the IRS in-care-of
 * lines that name a person, derived from the bundled IRS files by bench/alternate-names/given-names.ts
 * (which says how). Generated: do not edit by hand.
 */
export const GIVEN_NAMES: ReadonlySet<string> = new Set(
  \`${lines.join('\n')}\`.split(/\\s+/),
);
`);
