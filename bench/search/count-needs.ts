/**
 * Checks the hand-written need set of the search bench (bench/search/needs.json) against the NTEE
 * list and counts, in the IRS files of data/ (never the API), the organizations each query's rule
 * grades 2 and 1; writes the counts into the file. The queries and their codes are written by hand
 * (the rule is in bench/search/README.md, Needs); only the counts are computed here, so run.ts can
 * tell when the data changed under them.
 *
 *   node bench/search/count-needs.ts [--file FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import { needGrade, normalise, readOrganizations } from './data.ts';
import type { NeedSet } from './data.ts';

const { values } = parseArgs({ options: { file: { type: 'string', default: join(import.meta.dirname, 'needs.json') } } });

/** What the issue asks for at least (issue 41, point 3). */
const MIN_QUERIES = { en: 40, es: 20 } as const;
const NTEE_CODES = join(import.meta.dirname, '..', '..', 'data', 'ntee', 'ntee_codes.csv');

const set = JSON.parse(readFileSync(values.file!, 'utf8')) as NeedSet;
const codes = new Map(
  (parse(readFileSync(NTEE_CODES), { columns: true, bom: true }) as Record<string, string>[]).map((row) => [row.code!, row]),
);

// A mistake in a hand-written list is caught here, before any count is trusted.
const problems: string[] = [];
const seen = new Set<string>();
for (const need of set.needs) {
  const where = `"${need.query}"`;
  if (need.language !== 'en' && need.language !== 'es') problems.push(`${where}: language ${need.language}`);
  if (seen.has(normalise(need.query))) problems.push(`${where}: asked twice`);
  seen.add(normalise(need.query));
  if (need.grade2.length === 0) problems.push(`${where}: no grade 2 code`);
  if (!need.reason) problems.push(`${where}: no reason`);
  for (const code of [...need.grade2, ...need.grade1]) {
    const row = codes.get(code);
    // Whole three-character codes only: a major group would take in codes that meet no need.
    if (row === undefined || row.level !== 'code') problems.push(`${where}: ${code} is not a three-character code of ntee_codes.csv`);
    // 01-19 are advocacy, management help and fund raising for other organizations, never a service to a person.
    else if (row.is_common_code === 'true') problems.push(`${where}: ${code} is a common code (01-19)`);
    if (!need.reason.includes(code)) problems.push(`${where}: the reason does not mention ${code}`);
  }
  for (const code of need.grade2) if (need.grade1.includes(code)) problems.push(`${where}: ${code} in both grades`);
  if (new Set([...need.grade2, ...need.grade1]).size !== need.grade2.length + need.grade1.length) problems.push(`${where}: a code listed twice`);
}
for (const [language, least] of Object.entries(MIN_QUERIES)) {
  const count = set.needs.filter((need) => need.language === language).length;
  if (count < least) problems.push(`${count} queries in ${language}, at least ${least} wanted`);
}

const organizations = await readOrganizations();
for (const need of set.needs) {
  const counts = { grade2: 0, grade1: 0 };
  for (const organization of organizations) {
    const g = needGrade(need, organization);
    if (g === 2) counts.grade2++;
    else if (g === 1) counts.grade1++;
  }
  if (counts.grade2 === 0) problems.push(`"${need.query}": no organization of grade 2 in data/`);
  need.organizations = counts;
}
if (problems.length > 0) {
  process.stderr.write(`${values.file}:\n${problems.map((problem) => `  ${problem}`).join('\n')}\n`);
  process.exit(1);
}
set.organizations = organizations.length;

// Two-space JSON with each list of codes and each pair of counts on one line, so a change to a rule
// reads as one line of a diff.
const text = JSON.stringify(set, null, 2)
  .replace(/\[\n\s+("[^"\n]*"(?:,\n\s+"[^"\n]*")*)\n\s+\]/g, (_, items: string) => `[${items.replace(/,\n\s+/g, ', ')}]`)
  .replace(/\{\n\s+("grade2": \d+),\n\s+("grade1": \d+)\n\s+\}/g, '{ $1, $2 }');
writeFileSync(values.file!, `${text}\n`);
const languages = Object.keys(MIN_QUERIES).map((language) => `${set.needs.filter((need) => need.language === language).length} ${language}`);
process.stderr.write(`Wrote ${values.file}: ${set.needs.length} need queries (${languages.join(', ')}), counted over ${organizations.length} organizations.\n`);
