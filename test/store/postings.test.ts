import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { buildSnapshot } from '../../src/publish/build.ts';
import { decodePostings, encodePostings, PostingsMatcher, postingRows } from '../../src/store/postgres/postings.ts';
import { SqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/store.ts';
import { textWords } from '../../src/store/search-text.ts';
import { Random } from '../../bench/lib/random.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { defaultDatasetSample } from '../helpers/default-dataset-sample.ts';
import type { DatasetSample } from '../helpers/default-dataset-sample.ts';
import { postgresSuite, publishedDatabase } from '../helpers/postgres.ts';

/** A snapshot's organizations' text index read the way PostgreSQL's table is loaded: token → ranks. */
function postingLists(snapshot: DatabaseSync): Map<string, Int32Array> {
  const lists = new Map<string, Int32Array>();
  for (const row of postingRows(snapshot)) lists.set(row.token, decodePostings(Buffer.from(row.postings.slice(2), 'hex'), row.organizations));
  return lists;
}

describe('posting lists', () => {
  it('match, for every word, one of its tokens: as a brute-force reading of the same lists does', () => {
    const random = new Random(7);
    const all = [...Array(20_000).keys()].map((rank) => rank + 1);
    const sets = new Map<string, Set<number>>();
    const lists = [];
    for (const [token, share] of [['a', 0.5], ['b', 0.2], ['c', 0.01], ['d', 0.003], ['e', 0.9], ['f', 0.0002]] as const) {
      const ranks = all.filter(() => random.chance(share));
      sets.set(token, new Set(ranks));
      const postings = encodePostings(ranks);
      assert.deepEqual([...decodePostings(postings, ranks.length)], ranks, token);
      lists.push({ token, organizations: ranks.length, postings });
    }
    const matcher = new PostingsMatcher();
    const searches = [[['a']], [['a'], ['b']], [['c'], ['e']], [['d'], ['a', 'c']], [['a', 'b'], ['c', 'd', 'f'], ['e']], [['a', 'b', 'c', 'd', 'e', 'f']], [['f'], ['e'], ['a']], [['a'], ['missing']], [['missing', 'd']], [['d', 'd'], ['d']]];
    // Twice over, so that the second pass runs in the space the first left behind.
    for (const words of [...searches, ...searches]) {
      const expected = all.filter((rank) => words.every((tokens) => tokens.some((token) => sets.get(token)?.has(rank))));
      const matches = matcher.match(words, lists, 1000);
      assert.equal(matches.count, expected.length, JSON.stringify(words));
      assert.deepEqual([...matches.first], expected.slice(0, 1000), JSON.stringify(words));
    }
  });

  describe('on the real names of Wyoming (about 6,000 organizations)', () => {
    let sample: DatasetSample;
    let directory: ReturnType<typeof temporaryDirectory>;
    let snapshot: DatabaseSync;
    before(async () => {
      sample = await defaultDatasetSample();
      directory = temporaryDirectory();
      await buildSnapshot(sample.input, join(directory.path, 'snapshot.sqlite'));
      snapshot = new DatabaseSync(join(directory.path, 'snapshot.sqlite'), { readOnly: true });
    });
    after(() => {
      snapshot?.close();
      directory?.remove();
      sample?.remove();
    });

    it('hold exactly the organizations the SQLite text index finds for each token, in rank order', () => {
      const lists = postingLists(snapshot);
      assert.ok(lists.size > 1000, `${lists.size} tokens`);
      const count = snapshot.prepare('SELECT count(*) AS n FROM organizations_text WHERE organizations_text MATCH ?');
      const ranks = snapshot.prepare('SELECT rowid FROM organizations_text WHERE organizations_text MATCH ? ORDER BY rowid');
      let checked = 0;
      for (const [token, list] of lists) {
        if (checked++ % 7 !== 0) continue;
        assert.equal(list.length, (count.get(`"${token}"`) as { n: number }).n, token);
        if (list.length > 30) assert.deepEqual([...list], ranks.all(`"${token}"`).map((row) => (row as { rowid: number }).rowid), token);
      }
    });

    describe('and PostgreSQL, reading them, finds what SQLite finds for a search alone', postgresSuite, () => {
      let sqlite: Store;
      let postgres: { store: Store; dispose: () => Promise<void> };
      let published: DatasetSample;
      before(async () => {
        sqlite = new SqliteStore(join(directory.path, 'snapshot.sqlite'));
        // The sample's input is read as it is built: PostgreSQL is published from a second one.
        published = await defaultDatasetSample();
        const { stores, dispose } = await publishedDatabase(published.input);
        postgres = { store: stores.acquire().store, dispose };
      });
      after(async () => {
        await sqlite?.close();
        await postgres?.dispose();
        published?.remove();
      });

      it('the same totals and the same first pages, for the words of real names alone and together', async () => {
        const names = snapshot.prepare('SELECT json FROM organization_items').all().map((row) => (JSON.parse((row as { json: string }).json) as { name: string }).name);
        const searches = searchesFrom(names);
        assert.ok(searches.length > 100, `${searches.length} searches`);
        let many = 0;
        for (const search of searches) {
          const [expected, actual] = await Promise.all([sqlite, postgres.store].map((store) => store.organizations({ search: [search] }, { first: 1, count: 20 })));
          // Ids, not bytes: the two builds were made at different times, which each document's last_modified tells.
          const ids = (page: typeof expected) => ({ total: page!.total, ids: page!.items.map((json) => (JSON.parse(json) as { id: string }).id), suggestion: page!.suggestion });
          assert.deepEqual(ids(actual), ids(expected), search);
          if (expected!.total > 100) many++;
        }
        assert.ok(many > 10, `${many} searches with more than 100 matches`);
      });
    });
  });
});


/** Searches of the words of real names, alone and in pairs, as a person would type them. */
function searchesFrom(names: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const name of names) for (const { word } of textWords(name)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const common = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([word]) => word);
  const pairs = names.filter((_, index) => index % 97 === 0).map((name) => name.toLowerCase().split(/\s+/).slice(0, 3).join(' '));
  return [...common.slice(0, 60), ...pairs, 'histor societ', 'commun foundat', 'casper humane socety', 'womens shelter'];
}
