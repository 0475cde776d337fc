import assert from 'node:assert/strict';
import { connect, createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { buildSnapshot } from '../../src/build/build.ts';
import { decodePostings, encodePostings, PostingListCache, PostingsMatcher, postingRows } from '../../src/store/postgres/postings.ts';
import type { PostingList } from '../../src/store/postgres/postings.ts';
import { publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { StoreUnavailable } from '../../src/store/store.ts';
import type { Store } from '../../src/store/store.ts';
import { textWords } from '../../src/store/search-text.ts';
import { Random } from '../../bench/lib/random.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { defaultDatasetSample } from '../helpers/default-dataset-sample.ts';
import type { DatasetSample } from '../helpers/default-dataset-sample.ts';
import { fixtureDataset } from '../fixtures/dataset.ts';
import { postgresSuite, publishedDatabase, quietLog, temporaryDatabase, testSettings, waitFor } from '../helpers/postgres.ts';
import { snapshotOrganizations } from '../helpers/snapshot-documents.ts';

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
    // Partial matches (see matchClauses): for each word, every other word and not that one.
    for (const words of searches.filter((search) => search.length > 1)) {
      const holds = (rank: number, tokens: readonly string[]) => tokens.some((token) => sets.get(token)?.has(rank));
      const clauses = words.map((left, index) => ({ words: words.filter((_, other) => other !== index), excluded: [left] }));
      const expected = all.filter((rank) => words.filter((tokens) => holds(rank, tokens)).length === words.length - 1);
      const matches = matcher.matchAny(clauses, lists, 1000);
      assert.equal(matches.count, expected.length, `partial ${JSON.stringify(words)}`);
      assert.deepEqual([...matches.first], expected.slice(0, 1000), `partial ${JSON.stringify(words)}`);
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
        const names = snapshotOrganizations(snapshot).map((row) => (JSON.parse(row.item) as { name: string }).name);
        const searches = searchesFrom(names);
        assert.ok(searches.length > 100, `${searches.length} searches`);
        let many = 0;
        for (const search of searches) {
          for (const range of [
            { first: 1, count: 20 },
            { first: 15, count: 20 },
          ]) {
            const [expected, actual] = await Promise.all([sqlite, postgres.store].map((store) => store.organizations({ search: [search] }, range)));
            // Ids, not bytes: the two builds were made at different times, which each document's last_modified tells.
            const ids = (page: typeof expected) => ({ total: page!.total, ids: page!.items.map((json) => (JSON.parse(json) as { id: string }).id), suggestion: page!.suggestion });
            assert.deepEqual(ids(actual), ids(expected), `${search} from ${range.first}`);
            if (range.first === 1 && expected!.total > 100) many++;
          }
          const facets = [{ kind: 'taxonomy' as const, taxonomy: 'ntee', depth: 1 }];
          const [expected, actual] = await Promise.all([sqlite, postgres.store].map((store) => store.organizationFacets({ search: [search] }, facets)));
          assert.deepEqual(actual, expected, `${search} facets`);
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
  return [...common.slice(0, 60), ...pairs, 'histor societ', 'commun foundat', 'casper humane socety', 'womens shelter', 'casper humane society', 'laramie zzyzx county', 'shaltar'];
}

/** A TCP proxy to PostgreSQL that can stop passing the server's answers on, as a server that hangs would. */
async function stallingProxy(target: URL): Promise<{ url: string; stall: () => void; close: () => void }> {
  let stalled = false;
  const sockets = new Set<Socket>();
  const server = createNetServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => stalled || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const url = new URL(target.href);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.href,
    stall: () => (stalled = true),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe('posting lists kept', () => {
  const list = (token: string, bytes: number): PostingList => ({ token, organizations: 1, postings: Buffer.alloc(bytes, 1) });
  it('are read once per token, shared by searches that ask at once, dropped least recently used first, and not kept when the reading fails', async () => {
    const reads: string[][] = [];
    let fail = false;
    const cache = new PostingListCache(3000, async (tokens) => {
      reads.push([...tokens]);
      await new Promise((resolve) => setImmediate(resolve));
      if (fail) throw new Error('unreachable');
      return tokens.filter((token) => token !== 'none').map((token) => list(token, 1000));
    });
    const [first, second] = await Promise.all([cache.get(['a', 'b']), cache.get(['b', 'none'])]);
    assert.deepEqual(first.map((found) => found.token), ['a', 'b']);
    assert.deepEqual(second.map((found) => found.token), ['b']);
    assert.deepEqual(reads, [['a', 'b'], ['none']], 'b was being read: the second search waited for it');
    await cache.get(['a']);
    assert.equal(reads.length, 2, 'kept');
    await cache.get(['c']);
    // a, b and c (1,064 bytes each) exceed 3,000: b, the least recently used, was dropped.
    await cache.get(['a', 'c']);
    assert.equal(reads.length, 3);
    await cache.get(['b']);
    assert.deepEqual(reads.at(-1), ['b']);
    fail = true;
    await assert.rejects(cache.get(['d']));
    fail = false;
    assert.deepEqual((await cache.get(['d'])).map((found) => found.token), ['d'], 'read again after a failure');
  });
});

describe('reading posting lists from a PostgreSQL that stops answering', postgresSuite, () => {
  // The test's timeout stands for "held": a read that waited on the stalled socket would outlast it.
  it('gives up within the query timeout, as StoreUnavailable (a 503), instead of holding the request', { timeout: 20_000 }, async () => {
    const database = await temporaryDatabase();
    const proxy = await stallingProxy(new URL(database.url));
    const stores = await PostgresStores.open(testSettings(proxy.url, { statementTimeoutMs: 300 }), quietLog);
    try {
      await publishToPostgres(fixtureDataset(), { url: database.url, migrate: true });
      await waitFor(() => stores.generation !== undefined, 10_000, 'the published generation');
      const search = (word: string) => stores.acquire().store.organizations({ search: [word] }, { first: 1, count: 5 });
      assert.equal((await search('shelter')).total, 2);
      proxy.stall();
      // A word not searched before: its posting list is not kept, and must be read. A statement
      // timeout of 300 ms: a query, or the COPY of posting lists, is given up on 1,300 ms after it was sent.
      await assert.rejects(search('clinic'), StoreUnavailable);
    } finally {
      await stores.close();
      proxy.close();
      await database.drop();
    }
  });
});
