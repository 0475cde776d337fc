/**
 * Prints every IRS SORT_NAME of the bundled files with its EIN, NAME and the verdict of
 * sortNameOmission, tab-separated, to study the data: `node bench/alternate-names/list.ts > /tmp/sort-names.tsv`.
 * The output names people: keep it out of the repository.
 */
import { sortNameOmission } from '../../src/sources/irs-sort-name.ts';
import { readSortNames } from './sort-names.ts';

for (const { ein, name, sortName } of readSortNames()) {
  const omission = sortNameOmission(sortName, name);
  const verdict = omission === undefined ? 'served' : `${omission.kind.split(',')[0]}: ${omission.reason}`;
  process.stdout.write(`${ein}\t${verdict}\t${sortName}\t${name}\n`);
}
