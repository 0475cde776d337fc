import { stemmer } from 'stemmer';
import type { SearchWords } from './store.ts';

/**
 * How text becomes searchable words, the same for every backend and for the index and the query alike
 * (so SQLite and PostgreSQL match the same items): case folded, accents and apostrophes removed
 * (`Women's` is `womens`, as the IRS writes it), `&` read as `and`, split into runs of letters and
 * digits, a few spellings made one (`st` is `saint`, below), filler words dropped, and English words
 * stemmed (Porter), so that "Shelters" finds "shelter". The backends only compare the tokens made here.
 */

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;
const APOSTROPHES = /['’ʼ`´]/gu;
const ENGLISH = /^[a-z]+$/;
/** Longer words are cut: no index keeps a word of any length (PostgreSQL takes at most 2 KB). */
const MAX_WORD_LENGTH = 64;
/** Stems already made: the words of a dataset repeat a great deal. Emptied when full. */
const STEMS_KEPT = 100_000;

/**
 * Words a search does not need to match and the index does not keep: articles, the prepositions of
 * names ("Friends of the Library") and legal forms. A search of nothing else matches nothing.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and the of for in at on to inc incorporated corp corporation co llc ltd'.split(' '),
);

/** Abbreviations common in organization names, read as the word they stand for. */
export const ABBREVIATIONS: Readonly<Record<string, string>> = {
  st: 'saint',
  ste: 'sainte',
  mt: 'mount',
  ft: 'fort',
  assn: 'association',
  assoc: 'association',
  ctr: 'center',
  centre: 'center',
  dept: 'department',
  vol: 'volunteer',
  vols: 'volunteers',
  intl: 'international',
  natl: 'national',
  univ: 'university',
  hosp: 'hospital',
  svc: 'service',
  svcs: 'services',
  bros: 'brothers',
  fdn: 'foundation',
  fndn: 'foundation',
  soc: 'society',
  inst: 'institute',
  twp: 'township',
  cnty: 'county',
  elem: 'elementary',
};

/**
 * Short forms that stand for a phrase: acronyms of well-known organizations and compounds written
 * as one word or two. A name with either form is found by both, and by the words of the phrase.
 */
export const PHRASES: Readonly<Record<string, string>> = {
  ymca: 'young mens christian association',
  ywca: 'young womens christian association',
  ymha: 'young mens hebrew association',
  vfw: 'veterans of foreign wars',
  pta: 'parent teacher association',
  pto: 'parent teacher organization',
  ptsa: 'parent teacher student association',
  fop: 'fraternal order of police',
  bpoe: 'benevolent and protective order of elks',
  ibew: 'international brotherhood of electrical workers',
  aauw: 'american association of university women',
  aarp: 'american association of retired persons',
  naacp: 'national association for the advancement of colored people',
  spca: 'society for the prevention of cruelty to animals',
  dav: 'disabled american veterans',
  casa: 'court appointed special advocates',
  nami: 'national alliance on mental illness',
  madd: 'mothers against drunk driving',
  ffa: 'future farmers of america',
  vfd: 'volunteer fire department',
  '4h': '4 h',
  childcare: 'child care',
  daycare: 'day care',
  healthcare: 'health care',
  nonprofit: 'non profit',
};

/** Each phrase as words, with its short form: longest phrases first, so that one holding another wins. */
const PHRASE_RULES = Object.entries(PHRASES)
  .map(([short, phrase]) => ({ short, words: phrase.split(' ') }))
  .sort((a, b) => b.words.length - a.words.length);
const PHRASE_STARTS = new Set(PHRASE_RULES.map((rule) => rule.words[0]!));

/** The tables above as maps: a word of a text must never meet an object's own properties (`constructor`). */
const ABBREVIATION_OF: ReadonlyMap<string, string> = new Map(Object.entries(ABBREVIATIONS));
const PHRASE_OF: ReadonlyMap<string, readonly string[]> = new Map(Object.entries(PHRASES).map(([short, phrase]) => [short, phrase.split(' ')]));

/**
 * Words Porter stemming would make one with a different word of organization names, each group here
 * a token of its own: humane is not human (HUMANE SOCIETY, SOCIETY FOR HUMAN RESOURCE MANAGEMENT),
 * nor humanity, Maine main, news new, United unit, organization organ, communications community,
 * generations general, universal university, providence providers, hospitality hospital, federal
 * federation, transitional transit, cooperative Cooper, aging AG, wellness well, and the places
 * Billings, Brookings and Wheeling bill, brook and wheel(s). Found in the bundled names: of the tokens
 * that two words each held by 40 names or more share, those whose words mean different things. Also
 * apart: words that would read as a state's postal code (are AR, gas GA, was WA, ute UT; see
 * search-places.ts). A group's token is its first word, which Porter makes of no word.
 */
const KEPT_APART: ReadonlyMap<string, string> = new Map(
  [
    'humane',
    'humanity',
    'humanities',
    'maine',
    'news',
    'united unite unites uniting',
    'organization organizations organizational organize organized organizer organizers organizing',
    'communication communications',
    'generation generations',
    'universal',
    'providence',
    'hospitality',
    'federal',
    'transition transitions transitional',
    'cooperative cooperatives cooperation',
    'age ages aged aging ageing',
    'wellness',
    'billings',
    'brookings',
    'wheeling',
    'are',
    'gas',
    'was',
    'ute utes',
  ].flatMap((group) => {
    const words = group.split(' ');
    return words.map((word) => [word, words[0]!] as const);
  }),
);

const stems = new Map<string, string>();

/** The indexed form of a word: its Porter stem when it is English (a-z only), or its own token when Porter would merge it with another word (KEPT_APART). */
export function stem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= STEMS_KEPT) stems.clear();
    stemmed = KEPT_APART.get(word) ?? (ENGLISH.test(word) ? stemmer(word) : word);
    stems.set(word, stemmed);
  }
  return stemmed;
}

/** Printable ASCII, which needs no decomposing, has no marks and only ASCII letters and digits. */
const PLAIN = /^[\x20-\x7e]*$/;
const PLAIN_WORD = /[a-z0-9]+/g;
const PLAIN_APOSTROPHES = /['`]/g;

/** Folded words of a text, abbreviations read in full, before phrases are joined and stop words dropped. */
function foldedWords(text: string): string[] {
  // Most names are plain ASCII (all of the IRS's): the same words, without Unicode's tables.
  const plain = PLAIN.test(text);
  // Lower case after decomposing (ℌ decomposes to H), and marks removed last (İ lowers to i and a dot).
  const folded = plain
    ? text.toLowerCase().replace(PLAIN_APOSTROPHES, '').replaceAll('&', ' and ')
    : text.normalize('NFKD').toLowerCase().replace(MARKS, '').replace(APOSTROPHES, '').replaceAll('&', ' and ');
  return (folded.match(plain ? PLAIN_WORD : WORD) ?? []).map((word) => {
    const short = word.length > MAX_WORD_LENGTH ? word.slice(0, MAX_WORD_LENGTH) : word;
    return ABBREVIATION_OF.get(short) ?? short;
  });
}

/** A word of a text as searched: `word` as written (folded), `token` as indexed; `phrase` holds the words a short form stands for. */
export interface TextWord {
  word: string;
  token: string;
  phrase?: readonly string[];
}

/** The words of a text, in order: phrases joined into their short form, stop words dropped. */
export function textWords(text: string | null | undefined): TextWord[] {
  if (text === null || text === undefined || text === '') return [];
  const words = foldedWords(text);
  const result: TextWord[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    const rule = PHRASE_STARTS.has(word) ? PHRASE_RULES.find((candidate) => candidate.words.every((part, offset) => words[index + offset] === part)) : undefined;
    if (rule !== undefined) {
      result.push({ word: rule.short, token: stem(rule.short), phrase: rule.words });
      index += rule.words.length - 1;
    } else if (PHRASE_OF.has(word)) {
      result.push({ word, token: stem(word), phrase: PHRASE_OF.get(word)! });
    } else if (!STOP_WORDS.has(word)) {
      result.push({ word, token: stem(word) });
    }
  }
  return result;
}

/** The tokens of a text, in order, with repeats (each short form once, as the text is compared). */
export const searchWords = (text: string | null | undefined): string[] => textWords(text).map((word) => word.token);

/**
 * The tokens a text is found by: its own, and the words of each phrase it holds in short form (so a
 * name with YMCA is found by "young men's christian association" and "christian", and one with
 * the phrase by "ymca").
 */
export const indexedWords = (text: string | null | undefined): string[] => indexedTokens(textWords(text));

/** The tokens words of a text are found by (see indexedWords). */
export const indexedTokens = (words: readonly TextWord[]): string[] =>
  words.flatMap((word) => (word.phrase === undefined ? [word.token] : [word.token, ...word.phrase.filter((part) => !STOP_WORDS.has(part)).map(stem)]));

/** The indexed tokens of several texts as one line, separated by single spaces (what the indexes hold). */
export const searchLine = (...texts: (string | null | undefined)[]): string => texts.flatMap(indexedWords).join(' ');

/** The words a search asks for, in order, each once (by token). */
export function queryWords(search: SearchWords): TextWord[] {
  const seen = new Set<string>();
  return search.flatMap(textWords).filter((word) => !seen.has(word.token) && seen.add(word.token) !== undefined);
}
