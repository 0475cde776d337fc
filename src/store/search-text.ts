import { stemmer } from 'stemmer';
import type { SearchWords } from './store.ts';

/**
 * How text becomes searchable words, the same for every backend (so SQLite and PostgreSQL match the
 * same items): case folded, accents removed, split into runs of letters and digits, and English words
 * stemmed (Porter), so that "Shelters" finds "shelter". The backends only compare the words made here.
 */

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;
const ENGLISH = /^[a-z]+$/;
/** Longer words are cut: no index keeps a word of any length (PostgreSQL takes at most 2 KB). */
const MAX_WORD_LENGTH = 64;
/** Stems already made: the words of a dataset repeat a great deal. Emptied when full. */
const STEMS_KEPT = 100_000;

const stems = new Map<string, string>();

function stem(word: string): string {
  const short = word.length > MAX_WORD_LENGTH ? word.slice(0, MAX_WORD_LENGTH) : word;
  if (!ENGLISH.test(short)) return short;
  let stemmed = stems.get(short);
  if (stemmed === undefined) {
    if (stems.size >= STEMS_KEPT) stems.clear();
    stemmed = stemmer(short);
    stems.set(short, stemmed);
  }
  return stemmed;
}

/** The searchable words of a text, in order, with repeats. */
export function searchWords(text: string | null | undefined): string[] {
  if (text === null || text === undefined || text === '') return [];
  // Lower case after decomposing (ℌ decomposes to H), and marks removed last (İ lowers to i and a dot).
  const folded = text.normalize('NFKD').toLowerCase().replace(MARKS, '');
  return (folded.match(WORD) ?? []).map(stem);
}

/** The words of several texts as one line, words separated by single spaces (what the indexes hold). */
export const searchLine = (...texts: (string | null | undefined)[]): string => texts.flatMap(searchWords).join(' ');

/** The distinct words a search asks for: every one must be found in an item for it to match. */
export const queryWords = (search: SearchWords): string[] => [...new Set(search.flatMap(searchWords))];
