import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { placeForms, stateNameAt } from '../../src/store/search-places.ts';
import { organizationQuery, partialMatches, Reading } from '../../src/store/search-query.ts';
import { rankCandidates } from '../../src/store/search-ranking.ts';
import { stem } from '../../src/store/search-text.ts';
import { Vocabulary } from '../../src/store/search-vocabulary.ts';

/** A vocabulary of these words (each its own stem), held by the given numbers of organizations. */
const vocabularyOf = (counts: Record<string, number>): Vocabulary =>
  new Vocabulary(
    Object.entries(counts)
      .map(([word, organizations]) => ({ word, token: stem(word), organizations }))
      .sort((a, b) => (a.word < b.word ? -1 : 1)),
  );

/** A query's words as `word: token@cost …`, a bound word marked with `+`. */
const shown = (query: ReturnType<typeof organizationQuery>): string[] =>
  query.words.map((word) => `${word.bound ? '+' : ''}${word.word}: ${[...word.alternatives].map(([token, cost]) => `${token}@${cost}`).join(' ')}`);

describe('the other forms of a place', () => {
  it('reads a state and its postal code as each other, and a place and its adjective', () => {
    assert.deepEqual(placeForms('hawaii'), ['hawaiian']);
    assert.deepEqual(placeForms('hawaiian'), ['hawaii']);
    assert.deepEqual(placeForms('texas').toSorted(), ['texan', 'tx']);
    assert.deepEqual(placeForms('tx').toSorted(), ['texan', 'texas']);
    assert.deepEqual(placeForms('ks'), ['kansas', 'kansan']);
    assert.deepEqual(stateNameAt(['meals', 'wheels', 'rhode', 'island'], 2), { code: 'ri', words: ['rhode', 'island'], length: 2 });
    assert.deepEqual(stateNameAt(['ri', 'food'], 0), { code: 'ri', words: ['rhode', 'island'], length: 1 });
    assert.deepEqual(stateNameAt(['district', 'columbia'], 0), { code: 'dc', words: ['district', 'columbia'], length: 2 });
    assert.equal(stateNameAt(['rhode', 'food', 'island'], 0), undefined);
  });

  it('does not read as a state a code that is mostly another word in names', () => {
    for (const code of ['in', 'co', 'or', 'me', 'hi', 'oh', 'ok', 'id', 'ma', 'pa', 'de', 'la', 'al', 'mi', 'il', 'mt', 'ne', 'va', 'md', 'ms', 'sc']) {
      assert.deepEqual(placeForms(code), [], code);
      assert.equal(stateNameAt([code], 0), undefined, code);
    }
    assert.deepEqual(placeForms('maine'), ['mainer']);
    assert.deepEqual(placeForms('indian'), [], 'Indian is mostly American Indian in US names, not India');
  });
});

describe('how a search is read', () => {
  const vocabulary = vocabularyOf({ road: 523, runner: 3, runners: 157, roadrunner: 18, food: 1200, bank: 900, mc: 155, donald: 94, mcdonald: 54, capitol: 138, capital: 450, hawaii: 2043, hawaiian: 178, area: 2275, ar: 246, ea: 40 });

  it('matches two words of a search by the one word names make of them, at a cost of 1 for the pair', () => {
    assert.deepEqual(shown(organizationQuery(['road runner food'], vocabulary)), ['road: road@0 roadrunn@0.5', 'runner: runner@0 roadrunn@0.5', 'food: food@0']);
  });

  it('matches a place by its other forms as the word itself', () => {
    const query = organizationQuery(['hawaii'], vocabulary);
    assert.deepEqual(shown(query), ['hawaii: hawaii@0 hawaiian@0']);
    assert.deepEqual([...query.words[0]!.sameWords!], ['hawaii', 'hawaiian']);
  });

  it('reads a code of a state of two words as both words, which a partial match may not lack', () => {
    const query = organizationQuery(['ri'], vocabulary);
    assert.deepEqual(shown(query), ['+ri: ri@0 rhode@0', '+ri: ri@0 island@0']);
    assert.equal(partialMatches(query), undefined, 'one word typed: no partial matches');
    assert.deepEqual(partialMatches(organizationQuery(['ri food'], vocabulary))?.mayLack, [2]);
    assert.deepEqual(shown(organizationQuery(['rhode island'], vocabulary)), ['rhode: rhode@0 ri@0', 'island: island@0 ri@0']);
  });

  it('ranks a name word that two words of the search match as one word of the name', () => {
    // RI holds rhode and island: MEALS ON WHEELS OF RI is the search exactly, and the longer name has a word more.
    const names = ['meals wheels ri chapter', 'meals wheels ri', 'roadrunner food bank chapter', 'roadrunner food bank'];
    const candidates = names.map((name, index) => ({ position: index + 1, rank: index + 1, names: `${name}\t\t\t` }));
    const rank = (search: string) => rankCandidates(candidates, organizationQuery([search], vocabulary), () => 0).map((candidate) => candidate.names.split('\t')[0]);
    assert.deepEqual(rank('meals on wheels of rhode island').slice(0, 2), ['meals wheels ri', 'meals wheels ri chapter']);
    assert.deepEqual(rank('road runner food bank').slice(0, 2), ['roadrunner food bank', 'roadrunner food bank chapter']);
  });

  it('respells real words and splits words only when read leniently', () => {
    assert.deepEqual(shown(organizationQuery(['capitol food'], vocabulary)), ['capitol: capitol@0', 'food: food@0']);
    assert.deepEqual(shown(organizationQuery(['capitol food'], vocabulary, Reading.respelt)), ['capitol: capitol@0 capit@1', 'food: food@0']);
    assert.deepEqual(shown(organizationQuery(['mcdonald food'], vocabulary)), ['mcdonald: mcdonald@0', 'food: food@0']);
    assert.deepEqual(shown(organizationQuery(['mcdonald food'], vocabulary, Reading.respelt)), ['+mcdonald: mcdonald@0 mc@0.5', '+mcdonald: mcdonald@0 donald@0.5', 'food: food@0']);
    // More names hold area than ar or ea: it is one word, and a partial match may lack it.
    const area = organizationQuery(['mcdonald area'], vocabulary, Reading.respelt);
    assert.deepEqual(shown(area).slice(2), ['area: area@0']);
    assert.deepEqual(partialMatches(area)?.mayLack, [2]);
  });
});
