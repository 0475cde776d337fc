import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { Diagnostics } from '../../src/sources/files/diagnostics.ts';
import { readNteeTerms } from '../../src/sources/ntee.ts';
import { readOpenEligibilityTerms } from '../../src/sources/open-eligibility.ts';
import { STOP_WORDS, searchWords } from '../../src/store/search-text.ts';

// The curated lists of src/store/everyday-words.md: everyday phrases for taxonomy terms, and the
// words people add to a need that say nothing about which need.

const path = (file: string) => new URL(`../../${file}`, import.meta.url).pathname;

/** A CSV file's header and its rows as records of that header. */
function readCsv(file: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...lines] = parse(readFileSync(path(file), 'utf8')) as string[][];
  return { header, rows: lines.map((line) => Object.fromEntries(header.map((column, index) => [column, line[index] ?? '']))) };
}

const phrases = readCsv('src/store/everyday-words.csv');
const fillers = readCsv('src/store/need-filler-words.csv');
const LANGUAGES = ['en', 'es'];

/** `taxonomy:code` → the parent's `taxonomy:code`, as the importer reads the shipped term lists (OE ids made codes, 1206 twice). */
async function shippedTerms(): Promise<Map<string, string | undefined>> {
  const diagnostics = new Diagnostics();
  const terms = [
    ...(await readNteeTerms(path('data/ntee/ntee_codes.csv'), { diagnostics })),
    ...(await readOpenEligibilityTerms(path('data/open-eligibility/open_eligibility_v2_terms.csv'), { diagnostics })),
  ];
  assert.deepEqual(diagnostics.errors, []);
  return new Map(terms.map((term) => [`${term.taxonomy}:${term.code}`, term.parentCode === undefined ? undefined : `${term.taxonomy}:${term.parentCode}`]));
}

/** A phrase's words as searched (folded, stemmed, stop words dropped), without the filler words. */
const fillerTokens = new Set(fillers.rows.flatMap((row) => searchWords(row.word)));
const needWords = (phrase: string) => searchWords(phrase).filter((token) => !fillerTokens.has(token));

describe('everyday words for taxonomy terms (src/store/everyday-words.csv)', () => {
  it('has the header phrase,language,terms,reason, and a language and a reason on every row', () => {
    assert.deepEqual(phrases.header, ['phrase', 'language', 'terms', 'reason']);
    assert.ok(phrases.rows.length >= 200, `${phrases.rows.length} rows`);
    for (const row of phrases.rows) {
      assert.ok(LANGUAGES.includes(row.language!), `${row.phrase}: language "${row.language}"`);
      assert.ok(row.reason!.trim().length > 10, `${row.phrase}: no reason`);
    }
    const spanish = phrases.rows.filter((row) => row.language === 'es').length;
    assert.ok(spanish * 4 >= phrases.rows.length, `a quarter of the phrases or more are Spanish (${spanish} of ${phrases.rows.length})`);
  });

  it('writes phrases plainly: lower case, unaccented, one to four words', () => {
    const unplain = phrases.rows.map((row) => row.phrase!).filter((phrase) => !/^[a-z0-9]+( [a-z0-9]+){0,3}$/.test(phrase));
    assert.deepEqual(unplain, []);
  });

  it('names only terms of the shipped NTEE and Open Eligibility lists, each once, none under another it names', async () => {
    const parents = await shippedTerms();
    const problems: string[] = [];
    for (const row of phrases.rows) {
      const terms = row.terms!.split(' ');
      if (row.terms!.trim() === '' || terms.some((term) => term === '')) problems.push(`${row.phrase}: terms "${row.terms}" are not single-space separated`);
      if (new Set(terms).size !== terms.length) problems.push(`${row.phrase}: a term named twice`);
      for (const term of terms) {
        if (!/^(ntee|oe_services|oe_situations):\S+$/.test(term)) problems.push(`${row.phrase}: "${term}" is not taxonomy:code`);
        else if (!parents.has(term)) problems.push(`${row.phrase}: ${term} is no shipped term`);
        // A term's descendants are found with it: naming one of them too says nothing more.
        for (let parent = parents.get(term); parent !== undefined; parent = parents.get(parent)) {
          if (terms.includes(parent)) problems.push(`${row.phrase}: ${term} is under ${parent}, also named`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('repeats no phrase within a language, even as the search reads it (stemmed, filler words dropped)', () => {
    const problems: string[] = [];
    const byWords = new Map<string, Record<string, string>>();
    for (const row of phrases.rows) {
      const words = needWords(row.phrase!);
      if (words.length === 0) problems.push(`${row.phrase}: nothing but filler or stop words`);
      const key = words.join(' ');
      const earlier = byWords.get(key);
      // The search does not know a query's language: a phrase of both must mean the same terms in both.
      if (earlier !== undefined && (earlier.language === row.language || earlier.terms !== row.terms)) {
        problems.push(`"${row.phrase}" (${row.language}) reads as "${earlier.phrase}" (${earlier.language})`);
      }
      byWords.set(key, row);
    }
    assert.deepEqual(problems, []);
  });

  it('has no phrase that is a filler word', () => {
    const fillerWords = new Set(fillers.rows.map((row) => row.word));
    assert.deepEqual(phrases.rows.filter((row) => fillerWords.has(row.phrase!)).map((row) => row.phrase), []);
  });
});

describe('need filler words (src/store/need-filler-words.csv)', () => {
  it('has the header word,language,reason; single plain words, each once per language, each with a reason', () => {
    assert.deepEqual(fillers.header, ['word', 'language', 'reason']);
    const seen = new Set<string>();
    for (const row of fillers.rows) {
      assert.match(row.word!, /^[a-z]+$/, `"${row.word}" is one plain lower-case word`);
      assert.ok(LANGUAGES.includes(row.language!), `${row.word}: language "${row.language}"`);
      assert.ok(row.reason!.trim().length > 10, `${row.word}: no reason`);
      assert.ok(!seen.has(`${row.language}:${row.word}`), `${row.word} (${row.language}) listed twice`);
      seen.add(`${row.language}:${row.word}`);
    }
  });

  it('lists no stop word: the search drops those already', () => {
    assert.deepEqual(fillers.rows.filter((row) => STOP_WORDS.has(row.word!)).map((row) => row.word), []);
  });

  it('keeps the words that tell needs apart ("low income", "child support", "public housing")', () => {
    for (const word of ['low', 'income', 'support', 'public', 'care', 'emergency', 'legal']) {
      assert.ok(!fillers.rows.some((row) => row.word === word), `"${word}" is no filler word`);
    }
  });
});
