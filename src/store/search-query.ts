import { queryWords, textWords } from './search-text.ts';
import type { Vocabulary } from './search-vocabulary.ts';
import type { SearchWords } from './store.ts';

/**
 * What a search of organizations asks for, and how its matches are ordered. Every word must match a
 * token of the organization (AND), through one of its alternatives:
 * - the word itself (cost 0);
 * - when no organization name holds the word as typed: the names' words one edit away, for words of 5
 *   letters or more, or two edits for 9 or more (cost 1 or 2 per edit) — never for shorter words,
 *   which have too many neighbours;
 * - for the last word, of 3 letters or more: the names' words it begins (cost 1, and a little more the
 *   fewer organizations hold the completion), so a search can be typed unfinished.
 * A search's total counts every organization matched so.
 */

export const FUZZY_MIN_LENGTH = 5;
export const TWO_EDITS_MIN_LENGTH = 9;
export const PREFIX_MIN_LENGTH = 3;
/** Alternatives kept per word, besides the word itself: the closest and commonest. */
const MAX_CORRECTIONS = 4;
const MAX_COMPLETIONS = 10;

export interface QueryWord {
  /** As typed (folded), and its token. */
  word: string;
  token: string;
  /** Every token that matches this word, with its cost (0 for the word itself). */
  alternatives: Map<string, number>;
}

export interface SearchQuery {
  words: QueryWord[];
}

const allowedEdits = (word: string): number => (word.length >= TWO_EDITS_MIN_LENGTH ? 2 : word.length >= FUZZY_MIN_LENGTH ? 1 : 0);

/** A search's words with their alternatives, drawn from the organizations' name words. */
export function organizationQuery(search: SearchWords, vocabulary: Vocabulary): SearchQuery {
  const typed = queryWords(search);
  return {
    words: typed.map(({ word, token }, index) => {
      const alternatives = new Map([[token, 0]]);
      const offer = (candidate: string, cost: number) => {
        if (cost < (alternatives.get(candidate) ?? Infinity)) alternatives.set(candidate, cost);
      };
      const edits = allowedEdits(word);
      if (edits > 0 && vocabulary.get(word) === undefined) {
        vocabulary
          .near(word, edits)
          .sort((a, b) => a.distance - b.distance || b.organizations - a.organizations)
          .slice(0, MAX_CORRECTIONS)
          .forEach((match) => offer(match.token, match.distance));
      }
      if (index === typed.length - 1 && word.length >= PREFIX_MIN_LENGTH) {
        const completions = vocabulary.completions(word, MAX_COMPLETIONS);
        completions.forEach((match, rank) => offer(match.token, 1 + rank / (2 * MAX_COMPLETIONS)));
      }
      return { word, token, alternatives };
    }),
  };
}

/**
 * A search of one token and no alternative: its total is a stored count (see filter-plan.ts).
 */
export const singleToken = (query: SearchQuery): string | undefined =>
  query.words.length === 1 && query.words[0]!.alternatives.size === 1 ? query.words[0]!.token : undefined;

/** A matched organization's ranking facts: `names` is its name's tokens, a tab, its alternate name's. */
export interface Candidate {
  position: number;
  /** Its place in the index: by number of name tokens, then list position. */
  rank: number;
  names: string;
}

/** How well one name matches: unset when some word is not in it. */
interface NameMatch {
  cost: number;
  /** 0 the query exactly, 1 its words in another order, 2 the name starts with them, 3 in order, 4 anywhere. */
  order: number;
  extra: number;
}

function matchName(tokens: readonly string[], query: SearchQuery): NameMatch | undefined {
  let cost = 0;
  let inOrder = true;
  let atStart = true;
  let last = -1;
  for (let index = 0; index < query.words.length; index++) {
    const { alternatives } = query.words[index]!;
    let found = -1;
    let foundCost = Infinity;
    for (let at = 0; at < tokens.length; at++) {
      const tokenCost = alternatives.get(tokens[at]!);
      if (tokenCost !== undefined && tokenCost < foundCost) {
        found = at;
        foundCost = tokenCost;
      }
    }
    if (found < 0) return undefined;
    cost += foundCost;
    if (found <= last) inOrder = false;
    if (found !== index) atStart = false;
    last = found;
  }
  const extra = tokens.length - query.words.length;
  const order = extra <= 0 ? (atStart ? 0 : 1) : atStart ? 2 : inOrder ? 3 : 4;
  return { cost, order, extra: Math.max(extra, 0) };
}

/** Ranking of a match whose names do not hold every word (it matched in its other text): after every name match. */
const UNMATCHED: NameMatch = { cost: Infinity, order: 9, extra: Infinity };

/** Which name matched: the organization's own name ranks ahead of an alternate name. */
const Field = { name: 0, alternateName: 1, neither: 2 } as const;

/**
 * Matches in relevance order: organizations whose name (or alternate name) holds every word first,
 * by how much was corrected or completed (cost), then fewest other words in the name, then the words'
 * order (the exact name, then the words in another order, then names starting with them, then in
 * order, then anywhere), then list position.
 */
export function rankCandidates(candidates: Candidate[], query: SearchQuery): Candidate[] {
  const scored = candidates.map((candidate) => {
    const [name = '', alternateName = ''] = candidate.names.split('\t');
    const byName = name === '' ? undefined : matchName(name.split(' '), query);
    if (byName !== undefined) return { candidate, field: Field.name, best: byName };
    const byAlternateName = alternateName === '' ? undefined : matchName(alternateName.split(' '), query);
    return byAlternateName === undefined ? { candidate, field: Field.neither, best: UNMATCHED } : { candidate, field: Field.alternateName, best: byAlternateName };
  });
  scored.sort(
    (a, b) =>
      compare(a.best.cost, b.best.cost) ||
      a.field - b.field ||
      compare(a.best.extra, b.best.extra) ||
      a.best.order - b.best.order ||
      a.candidate.position - b.candidate.position,
  );
  return scored.map((entry) => entry.candidate);
}

/** Numbers in order, Infinity equal to itself. */
const compare = (a: number, b: number): number => (a === b ? 0 : a < b ? -1 : 1);

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
