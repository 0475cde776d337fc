/**
 * How far ranking alone can take topical nDCG@10 (issue 18 asks for 0.95). For each topic of the
 * judged set it reads the organizations the API ranks (the first 1,000 matches, per_page 100) and
 * scores three orders of that same set against the ideal over every judged organization:
 *   - the API's own;
 *   - the best there is: the matches sorted by grade;
 *   - the best that keeps the first rule, "an exact name first": names that are the search's
 *     words as typed (filler left out, in any order) ahead, then the rest by grade;
 *   - the best that also keeps its last rule, partial matches after the rest: exact names, then names
 *     holding every word searched for (by token, as the index has them), then the others, each by grade.
 * A topic below 1 in the second column is bounded by what matches, not by how it is ordered.
 *
 *   node bench/search/ceiling.ts [--data-dir DIR | --url URL]
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { queryWords, textWords } from '../../src/store/search-text.ts';
import { formatTable, log, runMain } from '../lib/run.ts';
import { API, servedBundled, startServer } from '../lib/served.ts';
import type { Server } from '../lib/served.ts';
import { grade, readOrganizations } from './data.ts';
import type { TopicRule } from './data.ts';

const RANKED = 1000;
const PER_PAGE = 100;

const dcg = (grades: readonly number[]): number => grades.slice(0, 10).reduce((sum, g, index) => sum + (2 ** g - 1) / Math.log2(index + 2), 0);
const byGrade = (grades: readonly number[]): number[] => [...grades].sort((a, b) => b - a);
/** Whether a name's tokens hold every token searched for. */
const holdsEvery = (searched: readonly string[], names: readonly (string | undefined)[]): boolean => {
  const tokens = new Set(names.flatMap((name) => textWords(name).map((word) => word.token)));
  return searched.every((token) => tokens.has(token));
};
/** The words as typed, folded, filler left out, as a set. */
const wordSet = (words: readonly { word: string }[]): string => [...new Set(words.map((word) => word.word))].sort().join(' ');

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, url: { type: 'string' }, port: { type: 'string', default: '18791' } } });
  const set = JSON.parse(readFileSync(join(import.meta.dirname, 'queries.json'), 'utf8')) as { topics: { query: string; rule: TopicRule }[] };
  log('Reading the organizations of data/irs-eo-bmf ...');
  const organizations = await readOrganizations();
  const byEin = new Map(organizations.map((organization) => [organization.ein, organization]));
  let server: Server | undefined;
  let base = values.url?.replace(/\/+$/, '');
  if (base === undefined) {
    server = await startServer({ dataDir: resolve(values['data-dir'] ?? (await servedBundled())) }, Number(values.port), ['--response-cache-size', '0']);
    base = `http://127.0.0.1:${values.port}`;
  }
  const rows: string[][] = [];
  const sums = [0, 0, 0, 0];
  try {
    for (const topic of set.topics) {
      const ideal = dcg(byGrade(organizations.map((organization) => grade(topic.rule, organization))));
      const searched = wordSet(queryWords([topic.query]));
      const searchedTokens = queryWords([topic.query]).map((word) => word.token);
      const matches: { grade: number; exact: boolean; full: boolean }[] = [];
      for (let page = 1; page <= RANKED / PER_PAGE; page++) {
        const url = `${base}${API}/organizations?per_page=${PER_PAGE}&page=${page}&search=${encodeURIComponent(topic.query)}`;
        const body = (await (await fetch(url)).json()) as { contents: { name: string; alternate_name?: string; external_identifier: string }[]; last_page: boolean };
        for (const item of body.contents) {
          const organization = byEin.get(item.external_identifier);
          if (organization === undefined) throw new Error(`${item.external_identifier} is not in data/`);
          matches.push({ grade: grade(topic.rule, organization), exact: wordSet(textWords(item.name)) === searched, full: holdsEvery(searchedTokens, [item.name, item.alternate_name]) });
        }
        if (body.last_page) break;
      }
      const grades = matches.map((match) => match.grade);
      const scores = [
        dcg(grades) / ideal,
        dcg(byGrade(grades)) / ideal,
        dcg([...byGrade(matches.filter((match) => match.exact).map((match) => match.grade)), ...byGrade(matches.filter((match) => !match.exact).map((match) => match.grade))]) / ideal,
        dcg(
          [(match: (typeof matches)[number]) => match.exact, (match: (typeof matches)[number]) => !match.exact && match.full, (match: (typeof matches)[number]) => !match.exact && !match.full].flatMap(
            (tier) => byGrade(matches.filter(tier).map((match) => match.grade)),
          ),
        ) / ideal,
      ];
      scores.forEach((score, index) => (sums[index]! += score));
      rows.push([topic.query, String(matches.length), String(matches.filter((match) => match.exact).length), ...scores.map((score) => score.toFixed(3))]);
    }
  } finally {
    await server?.stop();
  }
  rows.push(['mean', '', '', ...sums.map((sum) => (sum / set.topics.length).toFixed(3))]);
  console.log(formatTable(['topic', 'ranked matches', 'exact names', 'this API', 'best order', 'best with exact names first', 'and partial matches last'], rows, new Set([0])));
  return 0;
}

runMain(main);
