import { stem } from './search-text.ts';
import type { QueryWord, SearchQuery } from './search-query.ts';

/**
 * How a search's matches are ordered (see SearchQuery for what they match): by how well a name
 * holds the words, then by what the organization is classified under.
 */

/**
 * A matched organization's ranking facts: `names` is its name's words (as search-text.ts reads them,
 * before stemming), a tab, its alternate name's, a tab, the tokens of the names of the terms it is
 * classified under (its topics), a tab, and those terms' positions.
 */
export interface Candidate {
  position: number;
  /** Its place in the index: by number of name tokens, then list position. */
  rank: number;
  names: string;
}

/** How well one name matches: unset when some word is not in it. */
interface NameMatch {
  cost: number;
  /** 0 the query exactly, 1 its words in another order, 2 the name starts with them, 3 holds them together in order, 4 in order, 5 anywhere. */
  order: number;
  extra: number;
  /** Words searched for that the name holds only in another form of the word (veteran for veterans). */
  inflected: number;
}

function matchName(words: readonly string[], query: SearchQuery): NameMatch | undefined {
  const tokens = words.map(stem);
  let cost = 0;
  let inflected = 0;
  let inOrder = true;
  let together = true;
  let atStart = true;
  let last = -1;
  // A partial match's name may lack one word of `mayLack`; the words it holds are ranked as a search of them would be.
  let lacksOne = false;
  // The name's words the search's words were found at: two words may be found at one (road runner at ROADRUNNER, rhode island at RI).
  let held = 0;
  for (let index = 0; index < query.words.length; index++) {
    const { word, alternatives, sameWords } = query.words[index]!;
    const asTyped = (nameWord: string | undefined) => nameWord === word || (sameWords?.has(nameWord!) ?? false);
    let found = -1;
    let foundCost = Infinity;
    for (let at = 0; at < tokens.length; at++) {
      const tokenCost = alternatives.get(tokens[at]!);
      if (tokenCost === undefined) continue;
      if (tokenCost < foundCost || (tokenCost === foundCost && asTyped(words[at]) && !asTyped(words[found]))) {
        found = at;
        foundCost = tokenCost;
      }
    }
    if (found < 0) {
      if (lacksOne || !query.mayLack.includes(index)) return undefined;
      lacksOne = true;
      continue;
    }
    cost += foundCost;
    if (foundCost === 0 && !asTyped(words[found])) inflected++;
    // The name word the word before was found at: one word of the name for both.
    if (found === last) continue;
    if (found < last) inOrder = false;
    if (held > 0 && found !== last + 1) together = false;
    if (found !== held) atStart = false;
    last = found;
    held++;
  }
  const extra = tokens.length - held;
  const order = extra <= 0 ? (atStart ? 0 : 1) : atStart ? 2 : inOrder ? (together ? 3 : 4) : 5;
  return { cost, order, extra: Math.max(extra, 0), inflected };
}

/** Ranking of a match whose names do not hold every word (it matched in its other text): after every name match. */
const UNMATCHED: NameMatch = { cost: Infinity, order: 9, extra: Infinity, inflected: 0 };

/** How a match's classification fits the search: under a term named by its words, under the search's category (searchCategory), under a term named by some of them, none. */
const Topic = { named: 0, category: 1, partlyNamed: 2, none: 3 } as const;

/** Which name matched: the organization's own name ranks ahead of an alternate name. */
const Field = { name: 0, alternateName: 1, neither: 2 } as const;

/**
 * What the search is about, read from the data: of the terms that at least this share and number
 * of the matching names are classified under, the one with the most matches weighed by the share of
 * its own organizations that match (matches² / its organizations). `4h club` finds Youth Development
 * - Agricultural (517 of the first 1,000 matches, of its 1,719 organizations in the bundled data)
 * rather than the broad situation Teens that as many matches have (520, of 9,299); `animal shelter`
 * finds Animal Protection & Welfare (100 of 136 matches, of 4,504) rather than the small Single
 * Organization Support (15, of 155); `youth soccer` finds Soccer.
 */
const CATEGORY_SHARE = 0.1;
const CATEGORY_MIN = 3;

/** How many organizations a term (by position) is classified under, as the store knows it. */
export type TermSize = (term: number) => number;

/**
 * Matches in relevance order: organizations whose name (or alternate name) holds every word first,
 * by how much was corrected or completed (cost); among those the name before the alternate name,
 * then names holding the words as typed before other forms of them (a name equal to the search only
 * once stemmed, LEGALER AID for `legal aid`, is not the name searched for), then exact names, then those
 * classified under what the search is about (a term whose name holds the words, or the search's
 * category: see CATEGORY_SHARE, or a category its words name: `inNamedCategories`, see
 * search-categories.ts), then fewest other words in the name, then the words' order (the exact
 * name, then the words in another order, then names starting with them, then holding them together in order, then in order, then
 * anywhere), then list position. Partial matches are ranked alike on the words their names hold.
 */
export function rankCandidates(candidates: Candidate[], query: SearchQuery, termSize: TermSize, inNamedCategories?: ReadonlySet<number>): Candidate[] {
  const matched = candidates.map((candidate) => {
    const [name = '', alternateName = '', topics = '', terms = ''] = candidate.names.split('\t');
    const byName = name === '' ? undefined : matchName(name.split(' '), query);
    const byAlternateName = byName !== undefined || alternateName === '' ? undefined : matchName(alternateName.split(' '), query);
    const field = byName !== undefined ? Field.name : byAlternateName !== undefined ? Field.alternateName : Field.neither;
    return { candidate, field, best: byName ?? byAlternateName ?? UNMATCHED, topics, terms: terms === '' ? [] : terms.split(' ') };
  });
  const category = searchCategory(
    matched.filter((match) => match.field !== Field.neither).map((match) => match.terms),
    termSize,
  );
  // One number per match, its parts in order of weight, so that the sort compares numbers only.
  const keys = matched.map(({ candidate, field, best, topics, terms }) => {
    const topic = topicMatch(topics, query, (category !== undefined && terms.includes(category)) || inNamedCategories?.has(candidate.position) === true);
    const cost = Math.min(Math.round(best.cost * COST_STEPS), MAX_COST);
    const extra = Math.min(best.extra, MAX_EXTRA);
    const inflected = Math.min(best.inflected, MAX_INFLECTED);
    const coarse = (((((cost * 3 + field) * (MAX_INFLECTED + 1) + inflected) * 2 + Number(extra > 0)) * 4 + topic) * (MAX_EXTRA + 1) + extra) * 10 + best.order;
    return coarse * POSITIONS + candidate.position;
  });
  const order = matched.map((_, index) => index).sort((a, b) => keys[a]! - keys[b]!);
  return order.map((index) => matched[index]!.candidate);
}

/** Costs are counted in hundredths, up to MAX_COST; extra words up to MAX_EXTRA; positions below POSITIONS (2^23). */
const COST_STEPS = 100;
const MAX_COST = 999;
const MAX_EXTRA = 63;
const MAX_INFLECTED = 3;
const POSITIONS = 2 ** 23;

/** The search's category (a term position, as text; see CATEGORY_SHARE), if one is common enough among the matching names. */
function searchCategory(termsOfMatches: readonly string[][], termSize: TermSize): string | undefined {
  const counts = new Map<string, number>();
  for (const terms of termsOfMatches) for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  const enough = Math.max(CATEGORY_MIN, termsOfMatches.length * CATEGORY_SHARE);
  let category: string | undefined;
  let best = 0;
  for (const [term, count] of counts) {
    if (count < enough) continue;
    // A term's own size is never below the matches under it; a store that does not know it gives 0.
    const weight = (count * count) / Math.max(termSize(Number(term)), count);
    // Of terms alike (an NTEE code and the Open Eligibility term it maps to), the first: whatever order the matches came in.
    if (weight > best || (weight === best && Number(term) < Number(category))) {
      category = term;
      best = weight;
    }
  }
  return category;
}

/**
 * How the organization's classification fits the search (Topic): its topics hold every word
 * searched for, or it is in the search's category, or its topics hold some words. A short form (pta)
 * is held when most words of its phrase are (Parent Teacher Group).
 */
function topicMatch(topics: string, query: SearchQuery, inCategory: boolean): number {
  if (topics === '') return Topic.none;
  // A string search, not a Set: this runs for thousands of matches per search.
  const line = ` ${topics} `;
  const has = (token: string) => line.includes(` ${token} `);
  const held = ({ token, phrase }: QueryWord) => has(token) || (phrase !== undefined && phrase.filter(has).length * 2 > phrase.length);
  const found = query.words.filter(held).length;
  return found === query.words.length ? Topic.named : inCategory ? Topic.category : found > 0 ? Topic.partlyNamed : Topic.none;
}
