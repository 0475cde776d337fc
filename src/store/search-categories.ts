import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { OE_SITUATIONS_TAXONOMY } from '../hsds/known-taxonomies.ts';
import type { TaxonomyRow } from './filter-plan.ts';
import { FUZZY_MIN_LENGTH, SURELY_SPELT_RIGHT, TWO_EDITS_MIN_LENGTH } from './search-query.ts';
import { queryWords, textWords } from './search-text.ts';
import { Vocabulary } from './search-vocabulary.ts';
import type { SearchWords } from './store.ts';

/**
 * What a search means as categories: the taxonomy terms its words name, so that organizations
 * classified under them are found even when their names hold none of the words (`rent help` finds
 * housing assistance programs, `ged classes` adult education). A search is read against a curated
 * list of the everyday words people use for terms (everyday-words.csv, with each phrase's reason),
 * and failing that against the terms' own names. Words that say nothing of the need (`help`,
 * `free`, `near me`, `ayuda`: need-filler-words.csv) are passed over; of the others, all must be read
 * so in a search of one or two, two thirds in a longer one (readEnough): one word of several never
 * stands for the whole search (`legal aid` does not make `legal aid society of cleveland` a search for
 * legal services).
 */

/** A term as the matcher needs it: where it is, in which taxonomy, its code and name. */
export interface CategoryTerm {
  position: number;
  taxonomyPosition: number;
  code: string;
  name: string;
}

/** The terms one phrase of a search names (`rent` → housing assistance terms), by position. */
export interface CategoryGroup {
  terms: number[];
  /**
   * Whether they say whom a service is for (Open Eligibility's situations: seniors, veterans,
   * children) rather than what it is: such a group orders the organizations of the others, and lists
   * its own only when the search names nothing else.
   */
  who: boolean;
}

/**
 * The categories of a search. Its organizations are those classified under a term of a group, or a
 * term below one: of a group that says what a service is, when there is one (`food for seniors` lists
 * food programs, those for seniors first). Those under more of the groups come first, then those
 * under more of the terms.
 */
export interface SearchCategories {
  groups: CategoryGroup[];
  /** Every term named, in the order met, each once: what the answer says it included. */
  terms: number[];
}

/** The taxonomy whose terms say whom a service is for. */
const WHO_TAXONOMY = OE_SITUATIONS_TAXONOMY.code;

export interface EverydayPhrase {
  phrase: string;
  /** `taxonomy:code` references, as in the list. */
  terms: string[];
}

interface Lists {
  phrases: readonly EverydayPhrase[];
  filler: readonly string[];
}

const listFile = (name: string): string => readFileSync(new URL(name, import.meta.url), 'utf8');

let bundled: Lists | undefined;

/** The lists in this folder, read once. */
export function bundledLists(): Lists {
  bundled ??= {
    phrases: (parse(listFile('./everyday-words.csv'), { columns: true, skip_empty_lines: true }) as { phrase: string; terms: string }[]).map((row) => ({
      phrase: row.phrase,
      terms: row.terms.split(/\s+/u).filter((term) => term !== ''),
    })),
    filler: (parse(listFile('./need-filler-words.csv'), { columns: true, skip_empty_lines: true }) as { word: string }[]).map((row) => row.word),
  };
  return bundled;
}

/** A text's tokens, as names are indexed (search-text.ts). */
const tokensOf = (text: string): string[] => textWords(text).map((word) => word.token);

/** The parts of a term name that each name a thing: `Food Banks & Pantries` names food banks and (food) pantries. */
const NAME_PARTS = /\s*(?:,|&|\/|;|\(|\)|\band\b|\bor\b)\s*/iu;

/**
 * Whether a search is read as categories when `read` of its `words` (filler left out) are: all of one
 * or two words, and of more, at least two thirds: one word of several never stands for the whole
 * search (`legal aid society of cleveland`), while a need said in a sentence (`help after getting out
 * of prison`) may hold a word the lists do not know.
 */
export const readEnough = (read: number, words: number): boolean => (words <= 2 ? read === words : read >= Math.ceil((2 * words) / 3));

/** Where what a need is for begins: `for`, `para`, as a word. */
const QUALIFIER = /\b(?:for|para)\b/iu;

const sameTerms = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((term) => b.includes(term));

export class CategoryMatcher {
  /** Curated phrases by their tokens joined with spaces: the terms they name, by position. */
  private readonly phrases = new Map<string, number[]>();
  private readonly longestPhrase: number;
  private readonly filler: ReadonlySet<string>;
  /** Terms that say whom a service is for (WHO_TAXONOMY). */
  private readonly who = new Set<number>();
  /** The words of the lists, which a search's words that are none of them are corrected to (`imigration`). */
  private readonly listWords: Vocabulary;
  /** Each term's name: its tokens, and the token sets of its parts. */
  private readonly termNames: { position: number; tokens: Set<string>; parts: string[][] }[] = [];

  /** The words of organization names (search-vocabulary.ts): one many names hold is spelt right. */
  private readonly nameWords: Pick<Vocabulary, 'get'>;

  constructor(taxonomies: readonly TaxonomyRow[], terms: Iterable<CategoryTerm>, names: Pick<Vocabulary, 'get'>, lists: Lists = bundledLists()) {
    this.nameWords = names;
    const positionOf = new Map<string, number>();
    const taxonomyCodes = new Map(taxonomies.map((taxonomy) => [taxonomy.position, taxonomy.code.toLowerCase()]));
    for (const term of terms) {
      const taxonomy = taxonomyCodes.get(term.taxonomyPosition);
      if (taxonomy === undefined) continue;
      positionOf.set(`${taxonomy}:${term.code}`, term.position);
      if (taxonomy === WHO_TAXONOMY) this.who.add(term.position);
      const parts = term.name.split(NAME_PARTS).map(tokensOf).filter((part) => part.length > 0);
      this.termNames.push({ position: term.position, tokens: new Set(parts.flat()), parts });
    }
    this.filler = new Set(lists.filler.flatMap(tokensOf));
    const words = new Map<string, string>();
    for (const text of [...lists.filler, ...lists.phrases.map((row) => row.phrase)]) for (const { word, token } of textWords(text)) words.set(word, token);
    this.listWords = new Vocabulary([...words].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([word, token]) => ({ word, token, organizations: 1 })));
    let longest = 0;
    for (const { phrase, terms: references } of lists.phrases) {
      // Filler inside a phrase (`clases de ingles`) is passed over in the search too.
      const key = tokensOf(phrase)
        .filter((token) => !this.filler.has(token))
        .join(' ');
      if (key === '') continue;
      // A dataset without a term the list names (another taxonomy, or none) leaves it out.
      const positions = references.flatMap((reference) => {
        const [taxonomy = '', ...code] = reference.split(':');
        const position = positionOf.get(`${taxonomy.toLowerCase()}:${code.join(':')}`);
        return position === undefined ? [] : [position];
      });
      if (positions.length === 0) continue;
      const known = this.phrases.get(key) ?? [];
      this.phrases.set(key, [...new Set([...known, ...positions])]);
      longest = Math.max(longest, key.split(' ').length);
    }
    this.longestPhrase = longest;
  }

  /** The categories a search names, if every word of it that is not filler is read as one. */
  match(search: SearchWords): SearchCategories | undefined {
    // What follows `for` (`para`) says whom or what the need before it is for: `shelter for women and kids`.
    const text = search.join(' ');
    const at = QUALIFIER.exec(text);
    const head = at === null ? text : text.slice(0, at.index);
    const qualifier = at === null ? '' : text.slice(at.index + at[0].length);
    const headTokens = this.tokensOf(head);
    const qualifierTokens = this.tokensOf(qualifier);
    const tokens = [...headTokens, ...qualifierTokens];
    if (tokens.length === 0) return undefined;
    const byHead = this.curated(headTokens);
    const byQualifier = this.curated(qualifierTokens);
    // A phrase that holds the word itself (`escuela para adultos`) is read whole, when it reads more.
    const wholeTokens = at === null ? [] : this.tokensOf(text);
    const whole = at === null ? undefined : this.curated(wholeTokens);
    const isWho = (terms: readonly number[]) => terms.every((term) => this.who.has(term));
    let groups: CategoryGroup[];
    if (whole !== undefined && whole.read > byHead.read + byQualifier.read && readEnough(whole.read, wholeTokens.length)) {
      groups = whole.groups.map((terms) => ({ terms, who: isWho(terms) }));
    } else if (readEnough(byHead.read + byQualifier.read, tokens.length)) {
      // A qualifier's groups only order the head's organizations, when the head names any.
      const qualifies = byHead.groups.length > 0;
      groups = [
        ...byHead.groups.map((terms) => ({ terms, who: isWho(terms) })),
        ...byQualifier.groups.filter((terms) => !byHead.groups.some((group) => sameTerms(group, terms))).map((terms) => ({ terms, who: qualifies || isWho(terms) })),
      ];
    } else {
      const named = this.named(tokens);
      if (named === undefined) return undefined;
      groups = [{ terms: named, who: isWho(named) }];
    }
    if (groups.length === 0) return undefined;
    return { groups, terms: [...new Set(groups.flatMap((group) => group.terms))] };
  }

  /**
   * The tokens of a search's text less filler, a word of 5 letters or more that is no word of the
   * lists, and that few organization names hold, read as the closest that is (one edit away, two
   * from 9 letters), as names are corrected (search-query.ts): `imigration lawyer` is immigration,
   * `rent asistance` rent, but `honey` is not money (many names hold it).
   */
  private tokensOf(text: string): string[] {
    return queryWords([text])
      .map(({ word, token }) => {
        if (word.length < FUZZY_MIN_LENGTH || this.listWords.get(word) !== undefined || (this.nameWords.get(word)?.organizations ?? 0) >= SURELY_SPELT_RIGHT) return token;
        const closest = this.listWords.near(word, word.length >= TWO_EDITS_MIN_LENGTH ? 2 : 1).sort((a, b) => a.distance - b.distance || (a.word < b.word ? -1 : 1))[0];
        return closest?.token ?? token;
      })
      .filter((token) => !this.filler.has(token));
  }

  /** Groups of the curated phrases read in the tokens, longest phrase first from each word on, and how many tokens they read. */
  private curated(tokens: readonly string[]): { groups: number[][]; read: number } {
    const groups: number[][] = [];
    let read = 0;
    for (let at = 0; at < tokens.length; ) {
      let found: { length: number; terms: number[] } | undefined;
      for (let length = Math.min(this.longestPhrase, tokens.length - at); length > 0 && found === undefined; length--) {
        const terms = this.phrases.get(tokens.slice(at, at + length).join(' '));
        if (terms !== undefined) found = { length, terms };
      }
      if (found === undefined) {
        at++;
        continue;
      }
      if (!groups.some((group) => sameTerms(group, found.terms))) groups.push(found.terms);
      read += found.length;
      at += found.length;
    }
    return { groups, read };
  }

  /**
   * The terms whose names hold every word and name a thing with some of them (a part of the name is
   * among the words): `food pantry` names Food Banks & Pantries, `food` alone does not name it.
   */
  private named(tokens: readonly string[]): number[] | undefined {
    const wanted = new Set(tokens);
    const terms = this.termNames
      .filter(({ tokens: held, parts }) => tokens.every((token) => held.has(token)) && parts.some((part) => part.every((token) => wanted.has(token))))
      .map(({ position }) => position);
    return terms.length === 0 ? undefined : terms;
  }
}

/** Terms per group, and groups per search, at most (a search has at most 32 words); the step between groups' numbers. */
const MAX_TERMS = 1023;
const MAX_GROUPS = 31;
/** Positions are below this (268 million organizations). */
const POSITION_SPAN = 2 ** 28;
export const CATEGORY_GROUP_STEP = 2 ** 20;
/**
 * A category member's key: its position × MEMBER_KEY_STEP + its group's number (below 32), + TAGGED_FLAG
 * for a term it is tagged with itself (not only under it).
 */
export const MEMBER_KEY_STEP = 64;
export const TAGGED_FLAG = 32;

/**
 * A search's category terms, each once with the number of the first group naming it: the groups that
 * list organizations first (those saying what a service is, or all when every group says whom it is
 * for), `listing` of them, then the others.
 */
export function numberedCategoryTerms({ groups }: SearchCategories): { listing: number; terms: { term: number; group: number }[] } {
  const what = groups.filter((group) => !group.who);
  const ordered = what.length > 0 ? [...what, ...groups.filter((group) => group.who)] : groups;
  const seen = new Set<number>();
  const terms = ordered.slice(0, MAX_GROUPS).flatMap((group, index) =>
    group.terms
      .filter((term) => term < CATEGORY_GROUP_STEP && !seen.has(term) && seen.add(term) !== undefined)
      .slice(0, MAX_TERMS)
      .map((term) => ({ term, group: index })),
  );
  return { listing: Math.min(what.length > 0 ? what.length : groups.length, MAX_GROUPS), terms };
}

/**
 * A search's category matches in order, from the keys of its terms' organizations (see
 * MEMBER_KEY_STEP and numberedCategoryTerms): those under a term of a group that lists, less the
 * `excluded` (its name matches); under more of the groups first, then tagged with more of the terms
 * themselves (the phrase's own terms, rather than a narrower one below them), then under more of the
 * terms (an organization with NTEE L82 is also under the Open Eligibility terms the crosswalk gives
 * it, where one under a term below one of those is under that one alone), then in list order. At
 * most `limit`: the category's own list has the rest, and a search need not count or page through
 * thousands it ranks last.
 */
export function orderCategoryMatches(keys: readonly number[], categories: SearchCategories, excluded: ReadonlySet<number>, limit: number): number[] {
  const { listing } = numberedCategoryTerms(categories);
  // Sorted as numbers, each organization's keys together, read once: its groups as bits, its terms
  // (a Map per organization took 15 to 40 ms for 35,000 keys).
  const keyed = Float64Array.from(keys).sort();
  const listed = (1 << listing) - 1;
  const ordered = new Float64Array(keyed.length);
  let count = 0;
  for (let at = 0; at < keyed.length; ) {
    const position = Math.floor(keyed[at]! / MEMBER_KEY_STEP);
    let mask = 0;
    let hits = 0;
    let tagged = 0;
    for (; at < keyed.length && Math.floor(keyed[at]! / MEMBER_KEY_STEP) === position; at++) {
      const rest = keyed[at]! % MEMBER_KEY_STEP;
      if (rest >= TAGGED_FLAG) {
        tagged++;
        continue;
      }
      mask |= 1 << rest;
      hits++;
    }
    if ((mask & listed) === 0 || excluded.has(position)) continue;
    let groups = 0;
    for (let bits = mask; bits !== 0; bits &= bits - 1) groups++;
    // One number per match, so that the sort compares numbers only: groups missed, tags missed, terms
    // missed (each count below 256), position (below 2^28): below 2^53, as a double holds integers exactly.
    const missed = ((MAX_GROUPS - groups) * 256 + (255 - Math.min(tagged, 255))) * 256 + (255 - Math.min(hits, 255));
    ordered[count++] = missed * POSITION_SPAN + position;
  }
  const kept = ordered.subarray(0, count).sort().subarray(0, limit);
  return Array.from(kept, (key) => key % POSITION_SPAN);
}

/** The organizations listed by a search's categories (under a term of a group that lists), from the keys of their members (see orderCategoryMatches). */
export function listedMembers(keys: readonly number[], categories: SearchCategories): Set<number> {
  const { listing } = numberedCategoryTerms(categories);
  const members = new Set<number>();
  for (const key of keys) if (key % MEMBER_KEY_STEP < listing) members.add(Math.floor(key / MEMBER_KEY_STEP));
  return members;
}
