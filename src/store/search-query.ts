import { placeForms, stateNameAt } from './search-places.ts';
import { queryWords, stem, STOP_WORDS, textWords } from './search-text.ts';
import type { Vocabulary, WordMatch } from './search-vocabulary.ts';
import type { SearchWords } from './store.ts';

/**
 * What a search of organizations asks for, and how its matches are ordered. Every word must match a
 * token of the organization (AND), through one of its alternatives:
 * - the word itself (cost 0);
 * - the other forms of the place it names (cost 0, and counted as the word as typed): a state's name
 *   and its postal code (`rhode island` and RI, `tx` and TEXAS), a place and its adjective (`hawaii`
 *   and HAWAIIAN); see search-places.ts;
 * - with the word next to it, the one word names hold that the two make (`road runner`: ROADRUNNER;
 *   cost 0.5 each, so 1 for the pair): each of the two words matches it, so that a name holding it
 *   holds both, and a name holding both as typed comes first;
 * - when no organization name holds the word as typed, or so few that it is likely a misspelling
 *   (fewer than 20, and a twentieth as many as hold a word one or two edits away): the names' words
 *   one edit away, for words of 5 letters or more, or two edits for 9 or more (cost: the edits) —
 *   never for shorter words, which have too many neighbours;
 * - for the last word, of 3 letters or more: the names' words it begins (cost 1, and a little more the
 *   fewer organizations hold the completion), so a search can be typed unfinished.
 * A search that matches nothing so is read again more leniently (Reading): with words of 3 and 4
 * letters corrected too, one edit away, as long words are (`fod bank` finds food banks); and if that
 * matches nothing either, with words names do hold respelt to commoner ones (`capitol area food bank`
 * finds CAPITAL AREA FOOD BANK) and words split in two (`mcdonald` as MC DONALD). ListingStore answers
 * with the first reading that matches. When a search of several words matches few organizations,
 * those holding all its words but one common word follow (partialMatches). A search's total counts
 * every organization it answers with.
 */

export const FUZZY_MIN_LENGTH = 5;
export const TWO_EDITS_MIN_LENGTH = 9;
export const PREFIX_MIN_LENGTH = 3;
/** Alternatives kept per word, besides the word itself: the closest and commonest. */
const MAX_CORRECTIONS = 4;
const MAX_COMPLETIONS = 10;
/** A word held by this many times fewer organizations than a close word is read as a misspelling of it. */
const MISSPELLING_RATIO = 20;
/** A word held by this many organizations is taken as spelt right, and its neighbours are not looked for (which takes milliseconds). */
export const SURELY_SPELT_RIGHT = 20;
/** The cost of a name word made of two words of the search, or of one word split in two, for each of the two words: 1 in all, as a correction. */
const JOIN_COST = 0.5;
/** The shortest part a word is split into (`mc` of `mcdonald`). */
const MIN_SPLIT_PART = 2;

/** How leniently a search is read (see organizationQuery): each reading matches all the one before it matches, and more. */
export const Reading = {
  /** The words as typed, with the alternatives above. */
  typed: 0,
  /** Also words of 3 and 4 letters corrected, for a search that matches nothing as typed. */
  shortWords: 1,
  /**
   * Also, for a search that matches nothing with its short words corrected either: words of 5
   * letters or more that names hold respelt to the words one edit away (two at 9 letters) held by
   * more organizations (`capitol` finds CAPITAL: cost the edits), and each word read as the two
   * words of names it is made of, when more names hold each of them than the word (`mcdonald`
   * finds MC DONALD: cost 0.5 each).
   */
  respelt: 2,
} as const;
export type Reading = (typeof Reading)[keyof typeof Reading];

export interface QueryWord {
  /** As typed (folded), and its token. */
  word: string;
  token: string;
  /** Every token that matches this word, with its cost (0 for the word itself). */
  alternatives: Map<string, number>;
  /** For a short form (ymca): the tokens of the phrase it stands for, stop words left out. */
  phrase?: string[];
  /** About how many organization names hold the word or an alternative (from the vocabulary). */
  held: number;
  /** The words of names that count as the word as typed when they match it (its place's other forms); unset: the word alone. */
  sameWords?: ReadonlySet<string>;
  /** One of the words a typed word is read as (`ri` as rhode island, `mcdonald` as mc donald): a partial match may not lack it. */
  bound?: true;
}

export interface SearchQuery {
  words: QueryWord[];
  /** For the search's partial matches (see partialMatches): the indexes of the words a match may lack, one of them. Empty for its full matches. */
  mayLack: number[];
  /**
   * About how many organizations match, from the vocabulary: for each word, the organizations whose
   * names hold it or an alternative (the same word in another form, or in a description only, is
   * not counted), the fewest over the words. Enough to choose how to read the matches, not to count them.
   */
  estimatedMatches: number;
}

const allowedEdits = (word: string, shortWords: boolean): number =>
  word.length >= TWO_EDITS_MIN_LENGTH ? 2 : word.length >= FUZZY_MIN_LENGTH || (shortWords && word.length >= PREFIX_MIN_LENGTH) ? 1 : 0;

/** A search's word with its alternatives so far, as organizationQuery makes it. */
class WordReading {
  readonly word: string;
  readonly token: string;
  readonly phrase: string[] | undefined;
  readonly alternatives: Map<string, number>;
  readonly sameWords: Set<string>;
  /** About how many organization names hold the word or an alternative. */
  held: number;
  /** Tokens offered, to count the organizations holding each once. */
  private readonly offered: Set<string>;

  /** `held`: how many names hold the word as typed. */
  constructor(word: string, token: string, held: number, phrase: string[] | undefined) {
    this.word = word;
    this.token = token;
    this.phrase = phrase;
    this.alternatives = new Map([[token, 0]]);
    this.sameWords = new Set([word]);
    this.held = held;
    this.offered = new Set([token]);
  }

  /** `token` matches the word at `cost` (the lowest offered counts); `organizations` names hold it. */
  offer(token: string, organizations: number, cost: number): void {
    if (!this.offered.has(token)) {
      this.offered.add(token);
      this.held += organizations;
    }
    if (cost < (this.alternatives.get(token) ?? Infinity)) this.alternatives.set(token, cost);
  }

  /** `form` names the same place: it matches as the word itself. */
  offerForm(form: string, vocabulary: Vocabulary): void {
    this.offer(stem(form), vocabulary.get(form)?.organizations ?? 0, 0);
    this.sameWords.add(form);
  }

  queryWord(bound: boolean): QueryWord {
    const word: QueryWord = { word: this.word, token: this.token, alternatives: this.alternatives, phrase: this.phrase, held: this.held };
    if (this.sameWords.size > 1) word.sameWords = this.sameWords;
    if (bound) word.bound = true;
    return word;
  }
}

/**
 * A search's words with their alternatives, drawn from the organizations' name words, read as typed
 * or more leniently (Reading).
 */
export function organizationQuery(search: SearchWords, vocabulary: Vocabulary, reading: Reading = Reading.typed): SearchQuery {
  const typed = queryWords(search);
  const texts = typed.map((word) => word.word);
  // States of two words or more: named in full, each word also matches the code; by the code, it is read as the name's words.
  const stateCodes = new Map<number, string>();
  const statesByCode = new Map<number, readonly string[]>();
  for (let index = 0; index < typed.length; ) {
    const state = typed[index]!.phrase === undefined ? stateNameAt(texts, index) : undefined;
    if (state === undefined) {
      index++;
      continue;
    }
    if (state.length === 1) statesByCode.set(index, state.words);
    else for (let offset = 0; offset < state.length; offset++) stateCodes.set(index + offset, state.code);
    index += state.length;
  }
  const readings = typed.map(({ word, token, phrase }, index): WordReading[] => {
    const phraseTokens = phrase?.filter((part) => !STOP_WORDS.has(part)).map(stem);
    const held = vocabulary.get(word)?.organizations ?? 0;
    const stateWords = statesByCode.get(index);
    if (stateWords !== undefined) {
      return stateWords.map((part) => {
        const half = new WordReading(word, token, held, phraseTokens);
        for (const form of [part, ...placeForms(part)]) half.offerForm(form, vocabulary);
        return half;
      });
    }
    const read = new WordReading(word, token, held, phraseTokens);
    if (phrase === undefined) for (const form of placeForms(word)) read.offerForm(form, vocabulary);
    const code = stateCodes.get(index);
    if (code !== undefined) read.offerForm(code, vocabulary);
    const edits = allowedEdits(word, reading >= Reading.shortWords);
    const respell = reading === Reading.respelt && word.length >= FUZZY_MIN_LENGTH;
    if (edits > 0 && (held < SURELY_SPELT_RIGHT || respell)) {
      vocabulary
        .near(word, edits)
        .filter((match) => (respell ? match.organizations > held : match.organizations >= held * MISSPELLING_RATIO))
        .sort((a, b) => a.distance - b.distance || b.organizations - a.organizations)
        .slice(0, MAX_CORRECTIONS)
        .forEach((match) => read.offer(match.token, match.organizations, match.distance));
    }
    if (index === typed.length - 1 && word.length >= PREFIX_MIN_LENGTH) {
      const completions = vocabulary.completions(word, MAX_COMPLETIONS);
      completions.forEach((match, rank) => read.offer(match.token, match.organizations, 1 + rank / (2 * MAX_COMPLETIONS)));
    }
    if (reading === Reading.respelt && phrase === undefined) {
      const parts = splitWord(word, held, vocabulary);
      if (parts !== undefined) {
        // The word, or both its parts: each part matches the word (mcdonald), or its own words.
        return parts.map((part) => {
          const half = new WordReading(word, token, held, undefined);
          for (const [alternative, cost] of read.alternatives) half.offer(alternative, 0, cost);
          read.sameWords.forEach((form) => half.sameWords.add(form));
          half.held = read.held;
          half.offer(part.token, part.organizations, JOIN_COST);
          return half;
        });
      }
    }
    return [read];
  });
  // Two words next to each other that names hold as one word: each matches it.
  for (let index = 0; index + 1 < typed.length; index++) {
    if (readings[index]!.length !== 1 || readings[index + 1]!.length !== 1 || typed[index]!.phrase !== undefined || typed[index + 1]!.phrase !== undefined) continue;
    const joined = vocabulary.get(texts[index]! + texts[index + 1]!);
    if (joined === undefined) continue;
    readings[index]![0]!.offer(joined.token, joined.organizations, JOIN_COST);
    readings[index + 1]![0]!.offer(joined.token, joined.organizations, JOIN_COST);
  }
  const words = readings.flatMap((parts) => parts.map((part) => part.queryWord(parts.length > 1)));
  const estimatedMatches = Math.min(...words.map((word) => word.held));
  return { words, mayLack: [], estimatedMatches: Number.isFinite(estimatedMatches) ? estimatedMatches : 0 };
}

/**
 * The two words of names a word is made of, if any (`mcdonald`: mc and donald): of the ways to cut
 * it into two words names hold (no stop word, each of MIN_SPLIT_PART letters or more), each held by
 * more names than the word (`held`), the one whose rarer part the most names hold. A word commoner
 * than its parts is taken as one word: `area` is not ar and ea.
 */
function splitWord(word: string, held: number, vocabulary: Vocabulary): [WordMatch, WordMatch] | undefined {
  let best: [WordMatch, WordMatch] | undefined;
  for (let at = MIN_SPLIT_PART; at <= word.length - MIN_SPLIT_PART; at++) {
    const [head, tail] = [word.slice(0, at), word.slice(at)];
    if (STOP_WORDS.has(head) || STOP_WORDS.has(tail)) continue;
    const first = vocabulary.get(head);
    const second = first === undefined ? undefined : vocabulary.get(tail);
    if (first === undefined || second === undefined || Math.min(first.organizations, second.organizations) <= held) continue;
    if (best === undefined || Math.min(first.organizations, second.organizations) > Math.min(best[0].organizations, best[1].organizations)) best = [first, second];
  }
  return best;
}

/** Whether two readings of a search match alike: the same words, each through the same tokens. */
export const readAlike = (a: SearchQuery, b: SearchQuery): boolean =>
  a.words.length === b.words.length &&
  a.words.every((word, index) => {
    const other = b.words[index]!.alternatives;
    return word.alternatives.size === other.size && [...word.alternatives.keys()].every((token) => other.has(token));
  });

/**
 * A search of several words that fewer than this many organizations match goes on with its partial
 * matches (see partialMatches): `refugee services` (11 matches in the bundled data) then lists other
 * refugee programs. A search that many match is answered by its full matches alone.
 */
export const PARTIAL_MATCHES_BELOW = 20;

/**
 * A word of a search held by this many times as many organizations as its rarest word says little
 * about what is searched for (`services` in `refugee services`).
 */
const COMMON_WORD_RATIO = 4;

/**
 * The partial matches of a search of several words: the organizations holding every word but one of
 * its common words (COMMON_WORD_RATIO), or when it has none, every word but any one (`adult
 * literacy`: organizations named for literacy, or for adults). None of them is a full match. They
 * are ranked as full matches are (rankCandidates), the word a name lacks aside.
 */
export function partialMatches(query: SearchQuery): SearchQuery | undefined {
  // A word read as two (ri as rhode island) is not lacked in part.
  const lackable = query.words.flatMap((word, index) => (word.bound ? [] : [index]));
  if (query.words.length < 2 || lackable.length === 0 || query.mayLack.length > 0) return undefined;
  const rarest = Math.max(1, Math.min(...query.words.map((word) => word.held)));
  const common = lackable.filter((index) => query.words[index]!.held >= rarest * COMMON_WORD_RATIO);
  const mayLack = common.length > 0 ? common : lackable;
  return { ...query, mayLack, estimatedMatches: Math.max(...query.words.map((word) => word.held)) };
}

/** A condition on the words a match holds: every word of `held`, and none of `excluded` (each through any of its alternatives). */
export interface MatchClause {
  held: QueryWord[];
  excluded: QueryWord[];
}

/**
 * A query's matches are those of any of these clauses, which no organization meets two of: for full
 * matches, every word; for partial matches, for each word they may lack, every other word and not that one.
 */
export function matchClauses(query: SearchQuery): MatchClause[] {
  if (query.mayLack.length === 0) return [{ held: query.words, excluded: [] }];
  return query.mayLack.map((lacked) => ({ held: query.words.filter((_, other) => other !== lacked), excluded: [query.words[lacked]!] }));
}

/** How a backend's text index writes a query: a token (quoted), and its operators with their spacing. */
export interface MatchSyntax {
  token: (token: string) => string;
  and: string;
  or: string;
  /** Between what must match and what must not. */
  andNot: string;
}

/** A query's matches as an expression of a text index: any of its clauses (matchClauses), each word through any of its alternatives. */
export function matchExpression(query: SearchQuery, syntax: MatchSyntax): string {
  const anyAlternative = ({ alternatives }: QueryWord): string => `(${[...alternatives.keys()].map(syntax.token).join(syntax.or)})`;
  const clauses = matchClauses(query).map(({ held, excluded }) => {
    const all = held.map(anyAlternative).join(syntax.and);
    return excluded.length === 0 ? all : `(${all})${syntax.andNot}(${excluded.map(anyAlternative).join(syntax.or)})`;
  });
  return clauses.length === 1 ? clauses[0]! : clauses.map((clause) => `(${clause})`).join(syntax.or);
}

/**
 * A search of one token and no alternative: its total is a stored count (see filter-plan.ts).
 */
export const singleToken = (query: SearchQuery): string | undefined =>
  query.words.length === 1 && query.words[0]!.alternatives.size === 1 && query.mayLack.length === 0 ? query.words[0]!.token : undefined;

/** Corrections tried per word, and spellings of a whole search. */
const SUGGESTION_CHOICES = 3;

/**
 * Other spellings of a search that matched nothing, to be tried in turn: each word (as typed) that
 * is not a word of any name, replaced by one of the closest name words (within one edit for words of
 * 3 and 4 letters, two for longer ones), the commoner first. Empty when no word needs or finds one.
 */
export function suggestedSearches(search: SearchWords, vocabulary: Vocabulary): string[] {
  let spellings = [''];
  let changed = false;
  for (const piece of search.join(' ').split(/\s+/u).filter((part) => part !== '')) {
    const words = textWords(piece);
    const word = words.length === 1 && words[0]!.phrase === undefined ? words[0]!.word : undefined;
    let choices = [piece.toLowerCase()];
    if (word !== undefined && word.length >= PREFIX_MIN_LENGTH && vocabulary.get(word) === undefined) {
      const closest = vocabulary
        .near(word, word.length >= FUZZY_MIN_LENGTH ? 2 : 1)
        .sort((a, b) => a.distance - b.distance || b.organizations - a.organizations)
        .slice(0, SUGGESTION_CHOICES)
        .map((match) => match.word);
      if (closest.length > 0) {
        choices = closest;
        changed = true;
      }
    }
    spellings = spellings.flatMap((start) => choices.map((choice) => (start === '' ? choice : `${start} ${choice}`))).slice(0, SUGGESTION_CHOICES);
  }
  return changed ? spellings : [];
}
