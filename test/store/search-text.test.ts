import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queryWords, searchLine, searchWords } from '../../src/store/search-text.ts';

describe('search words (the same on every backend)', () => {
  it('folds case and accents, and splits at anything but letters and digits', () => {
    assert.deepEqual(searchWords('Café ÜNÏCODE, e-mail'), ['cafe', 'unicod', 'e', 'mail']);
    assert.deepEqual(searchWords('İstanbul'), ['istanbul']);
    assert.deepEqual(searchWords('ℌello ﬁve'), ['hello', 'five'], 'compatibility forms decompose, then fold');
    assert.deepEqual(searchWords('½ price'), ['1', '2', 'price']);
    assert.deepEqual(searchWords('東京 2026'), ['東京', '2026']);
    assert.deepEqual(searchWords(''), []);
    assert.deepEqual(searchWords(undefined), []);
  });

  it('stems English words (Porter), so that plurals and verb forms meet', () => {
    assert.deepEqual(searchWords('Shelters sheltering sheltered'), ['shelter', 'shelter', 'shelter']);
    assert.deepEqual(searchWords('families family'), ['famili', 'famili']);
    assert.deepEqual(searchWords('Straße'), ['straße'], 'words with letters outside a-z are not stemmed');
  });

  it('cuts words to 64 characters, the same in the index and in a search', () => {
    const long = 'x'.repeat(200);
    assert.equal(searchWords(long)[0]!.length, 64);
    assert.deepEqual(queryWords([long]), searchWords(long));
  });

  it('makes index lines of words, and searches of distinct words', () => {
    assert.equal(searchLine('Food Bank', undefined, 'Food pantries'), 'food bank food pantri');
    assert.deepEqual(queryWords(['Food', 'FOODS', 'e-mail']), ['food', 'e', 'mail']);
  });
});
