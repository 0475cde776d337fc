import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queryWords, searchLine, searchWords, stem } from '../../src/store/search-text.ts';

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

  it('keeps apart words Porter stemming would make one with a different word', () => {
    for (const [word, other] of [
      ['humane', 'human'],
      ['humanity', 'human'],
      ['maine', 'main'],
      ['news', 'new'],
      ['united', 'unit'],
      ['organization', 'organ'],
      ['communications', 'community'],
      ['generation', 'general'],
      ['are', 'ar'],
    ]) {
      assert.notEqual(stem(word!), stem(other!), `${word} ${other}`);
    }
    assert.deepEqual(searchWords('Organizations organized'), searchWords('organization organization'), 'the forms of one word still meet');
    assert.deepEqual(searchWords('Humane Society'), ['humane', 'societi']);
  });

  it('reads words that are names of object properties as words', () => {
    assert.deepEqual(searchWords('Robot Constructor Club'), ['robot', 'constructor', 'club']);
    assert.deepEqual(searchWords('toString valueOf __proto__ hasOwnProperty'), ['tostr', 'valueof', 'proto', 'hasownproperti']);
    assert.equal(searchLine('Constructor'), 'constructor');
  });

  it('cuts words to 64 characters, the same in the index and in a search', () => {
    const long = 'x'.repeat(200);
    assert.equal(searchWords(long)[0]!.length, 64);
    assert.deepEqual(queryWords([long]).map((word) => word.token), searchWords(long));
  });

  it('makes index lines of words, and searches of distinct words', () => {
    assert.equal(searchLine('Food Bank', undefined, 'Food pantries'), 'food bank food pantri');
    assert.deepEqual(queryWords(['Food', 'FOODS', 'e-mail']).map((word) => word.token), ['food', 'e', 'mail']);
  });

  it('drops apostrophes, reads & as and, and needs no filler words', () => {
    assert.deepEqual(searchWords("Women's Shelter"), searchWords('WOMENS SHELTER'));
    assert.deepEqual(searchWords('Boys & Girls Club'), searchWords('boys and girls club'));
    assert.deepEqual(searchWords('Big Brothers and Big Sisters of the Ozarks, Inc.'), searchWords('big brothers big sisters ozarks'));
    assert.deepEqual(searchWords('the of and'), [], 'a text of stop words only has no words');
  });

  it('reads common abbreviations as the words they stand for', () => {
    assert.deepEqual(searchWords('St Vincent de Paul'), searchWords('Saint Vincent de Paul'));
    assert.deepEqual(searchWords('Mt. Zion Vol Fire Dept'), searchWords('Mount Zion Volunteer Fire Department'));
  });

  it('makes a phrase and its short form one word, and indexes the phrase words too', () => {
    assert.deepEqual(searchWords("YOUNG MEN'S CHRISTIAN ASSOCIATION OF GREATER SEATTLE"), searchWords('YMCA Greater Seattle'));
    assert.deepEqual(searchWords('CHILD CARE CENTER'), searchWords('Childcare Center'));
    assert.deepEqual(searchWords('4-H Club'), searchWords('4H club'));
    assert.equal(searchLine('YMCA of Greater Seattle'), 'ymca young men christian associ greater seattl');
  });
});
