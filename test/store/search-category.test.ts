import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { organizationQuery } from '../../src/store/search-query.ts';
import { rankCandidates } from '../../src/store/search-ranking.ts';
import type { Candidate } from '../../src/store/search-ranking.ts';
import { Vocabulary } from '../../src/store/search-vocabulary.ts';

/**
 * The search's category (search-query.ts, searchCategory): the term that ranks its organizations
 * first among names alike. Candidates here all hold the words in the same way, so the category is
 * what orders them; names are given in list order (position).
 */
const vocabulary = new Vocabulary([{ word: 'club', token: 'club', organizations: 100 }]);
const query = organizationQuery(['club'], vocabulary);

/** Candidates named "<letter><n> club", in list order, each classified under the terms given (whose names' tokens are `other`). */
const candidates = (terms: readonly number[][]): Candidate[] =>
  terms.map((held, index) => ({
    position: index + 1,
    rank: index + 1,
    names: `${String.fromCharCode(97 + (index % 26))}${index} club\t\t${held.length === 0 ? '' : 'other'}\t${held.join(' ')}`,
  }));

const rankedTerms = (ranked: Candidate[]) => ranked.map((candidate) => candidate.names.split('\t')[3]);

describe('the category of a search', () => {
  it('is a term that many matches share and few other organizations have, not the broadest one', () => {
    // Term 1 is broad (1,000 organizations), held by 6 of 10 matches; term 2 is specific (8), held by 5.
    const terms = [[1], [1], [1], [1, 2], [2], [2], [2], [2], [], [1]];
    const sizes = new Map([
      [1, 1000],
      [2, 8],
    ]);
    const ranked = rankCandidates(candidates(terms), query, (term) => sizes.get(term) ?? 0);
    assert.deepEqual(rankedTerms(ranked).slice(0, 5), ['1 2', '2', '2', '2', '2']);
  });

  it('is not a small term that only a few matches share', () => {
    // Term 3 has 3 organizations, all matching (3 of 30 matches); term 4 is held by 25 of the 30, of its 100.
    const terms = [...Array(30).keys()].map((index) => (index < 3 ? [3] : index < 28 ? [4] : []));
    terms.reverse();
    const sizes = new Map([
      [3, 3],
      [4, 100],
    ]);
    const ranked = rankCandidates(candidates(terms), query, (term) => sizes.get(term) ?? 0);
    assert.deepEqual(rankedTerms(ranked).slice(0, 25), Array(25).fill('4'));
  });

  it('is the same whatever order the matches come in: of two alike, the term listed first', () => {
    // Terms 5 and 6: as many matches each (3 of 9), as many organizations (6).
    const terms = [[6], [], [5], [6], [], [5], [6], [], [5]];
    const sizes = (term: number) => (term === 5 || term === 6 ? 6 : 0);
    const forward = rankCandidates(candidates(terms), query, sizes);
    const backward = rankCandidates(candidates(terms).reverse(), query, sizes);
    assert.deepEqual(rankedTerms(forward).slice(0, 3), ['5', '5', '5']);
    assert.deepEqual(backward, forward);
  });
});
