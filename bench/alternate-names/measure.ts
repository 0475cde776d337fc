/**
 * Measures which IRS SORT_NAME values src/sources/irs-sort-name.ts leaves out as a person or care-of
 * line, and which it serves as alternate_name (see README.md beside this file).
 *
 *   node bench/alternate-names/measure.ts --seed 20260601 --print   the sample, to judge by hand
 *   node bench/alternate-names/measure.ts --seed 20260601           precision from the judged files
 *
 * The sample is 200 values drawn uniformly at random among those left out as a person or care-of
 * line, and 200 among those served, from every SORT_NAME of data/irs-eo-bmf. The judged files hold
 * EIN,verdict[,reason] only, never a name: dropped-judged.csv says `person` (an individual, or a
 * care-of or agent line) or `organization`; kept-judged.csv says `organization` or `person`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PERSON_OR_CARE_OF, sortNameOmission } from '../../src/sources/irs-sort-name.ts';
import { Random } from '../lib/random.ts';
import { readSortNames } from './sort-names.ts';
import type { SortNameRow } from './sort-names.ts';

const SAMPLE_SIZE = 200;
const { values } = parseArgs({ options: { seed: { type: 'string' }, print: { type: 'boolean', default: false } } });
if (values.seed === undefined) throw new Error('--seed N is required');
const seed = Number(values.seed);

/** `size` rows drawn without replacement (a partial Fisher–Yates shuffle). */
function sample(rows: readonly SortNameRow[], size: number, random: Random): SortNameRow[] {
  const pool = [...rows];
  for (let i = 0; i < size; i++) {
    const j = i + Math.floor(random.float() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, size);
}

const rows = readSortNames();
const dropped = rows.filter((row) => sortNameOmission(row.sortName, row.name)?.kind === PERSON_OR_CARE_OF);
const kept = rows.filter((row) => sortNameOmission(row.sortName, row.name) === undefined);
const random = new Random(seed);
const samples = { dropped: sample(dropped, SAMPLE_SIZE, random), kept: sample(kept, SAMPLE_SIZE, random) };
console.log(`${rows.length} SORT_NAME values: ${dropped.length} left out as a person or care-of line, ${kept.length} served; seed ${seed}`);

if (values.print) {
  // For the judge's eyes only: this output names people, keep it out of the repository.
  for (const [set, chosen] of Object.entries(samples)) {
    console.log(`\n${set}`);
    for (const row of chosen) console.log(`${row.ein}\t${row.sortName}\t${row.name}`);
  }
} else {
  const expected = { dropped: 'person', kept: 'organization' } as const;
  for (const [set, chosen] of Object.entries(samples) as [keyof typeof expected, SortNameRow[]][]) {
    const verdicts = new Map(
      readFileSync(join(import.meta.dirname, `${set}-judged.csv`), 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',') as [string, string]),
    );
    const missing = chosen.filter((row) => !verdicts.has(row.ein));
    if (missing.length > 0 || verdicts.size !== chosen.length) throw new Error(`${set}-judged.csv does not judge the sample of seed ${seed}`);
    const right = chosen.filter((row) => verdicts.get(row.ein) === expected[set]).length;
    console.log(`${set}: ${right}/${chosen.length} are ${expected[set] === 'person' ? 'people or care-of lines' : 'not people'} (${((100 * right) / chosen.length).toFixed(1)}%)`);
  }
}
