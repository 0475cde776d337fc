import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { normalisedTarget, ResponseCache } from '../../src/http/cached-responses.ts';
import type { ContentCoding } from '../../src/http/encoding.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store, StoreProvider } from '../../src/store/store.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';

/** A store that counts the calls that read data (all but info()). */
function counting(store: Store): { store: Store; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property !== 'info' && property !== 'close') reads++;
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, reads: () => reads };
}

describe('response cache', () => {
  const directory = temporaryDirectory();
  let first: ReturnType<typeof counting>;
  let second: ReturnType<typeof counting>;
  let current: Store;
  const stores: StoreProvider = { acquire: () => ({ store: current, release: () => {} }), readiness: async () => ({ ready: true }), close: async () => {} };

  before(async () => {
    const open = async (name: string, publishedAt: string, organizations = publishedOrganizations) => {
      const path = join(directory.path, `${name}.sqlite`);
      await buildSnapshot(fixtureDataset({ organizations }), path, { now: () => new Date(publishedAt) });
      return counting(new SqliteStore(path));
    };
    first = await open('first', '2026-01-01T00:00:00.000Z');
    // Published a minute later, with the first organization gone.
    second = await open('second', '2026-01-01T00:01:00.000Z', publishedOrganizations.slice(1));
    current = first.store;
  });
  after(async () => {
    await first.store.close();
    await second.store.close();
    directory.remove();
  });

  async function withApp(maxBytes: number, run: (app: FastifyInstance) => Promise<void>): Promise<void> {
    current = first.store;
    const app = await buildApp({ stores, logLevel: 'silent', responseCacheBytes: maxBytes });
    try {
      await run(app);
    } finally {
      await app.close();
    }
  }
  const get = (app: FastifyInstance, url: string, headers: Record<string, string> = {}) => app.inject({ url: `${API}${url}`, headers });

  it('answers a repeated request without reading the store, with the same bytes and headers', async () => {
    await withApp(1 << 20, async (app) => {
      const before = first.reads();
      const one = await get(app, '/organizations?per_page=5&page=2');
      assert.equal(first.reads() - before, 1);
      for (const url of ['/organizations?per_page=5&page=2', '/organizations?page=2&per_page=5', '/organizations/?page=%32&per_page=5']) {
        const again = await get(app, url);
        assert.equal(again.statusCode, 200, url);
        assert.equal(again.body, one.body, url);
        for (const header of ['content-type', 'etag', 'last-modified', 'cache-control', 'vary', 'access-control-allow-origin']) {
          assert.equal(again.headers[header], one.headers[header], `${url} ${header}`);
        }
      }
      assert.equal(first.reads() - before, 1);
      // Documents, taxonomy lists and the API root are kept too.
      for (const url of [`/organizations/${JSON.parse(one.body).contents[0].id}`, '/taxonomy_terms?taxonomy_id=things', '/']) {
        assert.equal((await get(app, url)).statusCode, 200, url);
        const reads = first.reads();
        assert.equal((await get(app, url)).statusCode, 200, url);
        assert.equal(first.reads(), reads, url);
      }
    });
  });

  it('keeps each coding once made, and sends the one each client asks for', async () => {
    await withApp(1 << 20, async (app) => {
      const plain = (await get(app, '/taxonomies')).body;
      const reads = first.reads();
      for (const accept of ['br', 'gzip', 'br', 'identity', 'gzip']) {
        const response = await get(app, '/taxonomies', { 'accept-encoding': accept });
        const coding = response.headers['content-encoding'];
        assert.equal(coding, accept === 'identity' ? undefined : accept);
        const body = coding === 'br' ? brotliDecompressSync(response.rawPayload) : coding === 'gzip' ? gunzipSync(response.rawPayload) : response.rawPayload;
        assert.equal(body.toString(), plain, accept);
      }
      assert.equal(first.reads(), reads);
      assert.equal(app.responseCache!.size.entries, 1);
    });
  });

  it('stays within its size, dropping the least recently used responses first', async () => {
    // Each of these pages takes 1.1 to 1.3 kB: any one may be kept (a 16th of the cache), not all 23.
    const maxBytes = 22 * 1024;
    await withApp(maxBytes, async (app) => {
      await get(app, '/organizations?per_page=1&page=1');
      for (let page = 2; page <= 23; page++) {
        await get(app, `/organizations?per_page=1&page=${page}`);
        const reads = first.reads();
        await get(app, `/organizations?per_page=1&page=${page}`);
        assert.equal(first.reads(), reads, `page ${page} was kept`);
        await get(app, '/organizations?per_page=1&page=1');
        assert.equal(first.reads(), reads, `page 1, in use all along, is still kept after page ${page}`);
        assert.ok(app.responseCache!.size.bytes <= maxBytes, `${app.responseCache!.size.bytes} bytes`);
      }
      assert.ok(app.responseCache!.size.entries < 23, 'something was evicted');
      const reads = first.reads();
      await get(app, '/organizations?per_page=1&page=2');
      assert.equal(first.reads(), reads + 1, 'the oldest page was evicted');
    });
  });

  it('holds no more memory than it counts, whatever buffers its bodies were cut from', async () => {
    // Bodies as the server makes them: strings of rendered pages turned into Buffers, then compressed.
    const pages: string[] = [];
    await withApp(0, async (app) => {
      for (let page = 1; page <= 40; page++) pages.push((await get(app, `/organizations?per_page=1&page=${page}`)).body);
    });
    const maxBytes = 64 * 1024;
    const cache = new ResponseCache(maxBytes);
    const codings: ContentCoding[] = ['identity', 'br', 'gzip'];
    const scope = 'version\norigin\n';
    const targets = pages.map((_, index) => `/organizations?page=${index}`);
    for (const [index, page] of pages.entries()) {
      const entry = cache.add(scope, targets[index]!, '2026-01-01T00:00:00Z', 'application/json', Buffer.from(page), '/organizations')!;
      for (const coding of codings) cache.grew(entry.body(coding).added);
    }
    assert.ok(cache.size.bytes <= maxBytes, `${cache.size.bytes} bytes counted`);
    assert.ok(cache.size.entries < pages.length, 'something was evicted');
    // The memory behind the bodies kept: each distinct ArrayBuffer once, as the allocator holds it.
    const held = new Set<ArrayBufferLike>();
    for (const target of targets) {
      const entry = cache.get(scope, target);
      if (entry !== undefined) for (const coding of codings) held.add(entry.body(coding).body.buffer);
    }
    const heldBytes = [...held].reduce((sum, buffer) => sum + buffer.byteLength, 0);
    assert.ok(heldBytes <= cache.size.bytes, `${heldBytes} bytes held for ${cache.size.bytes} counted`);
  });

  it('serves a new publish at once: older entries are unreachable and then dropped', async () => {
    await withApp(1 << 20, async (app) => {
      const before = await get(app, '/organizations?per_page=1');
      await get(app, '/taxonomies');
      assert.equal(app.responseCache!.size.entries, 2);
      current = second.store;
      const after = await get(app, '/organizations?per_page=1');
      assert.notEqual(after.headers.etag, before.headers.etag);
      assert.equal(JSON.parse(before.body).total_items, publishedOrganizations.length);
      assert.equal(JSON.parse(after.body).total_items, publishedOrganizations.length - 1);
      assert.equal(app.responseCache!.size.entries, 1);
    });
  });

  it('never answers for a new publish with a response begun before it and finished after', async () => {
    // The first store, its reads held until `open`; `reached` settles when a read is waiting.
    let open!: () => void;
    let reachedGate!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const reached = new Promise<void>((resolve) => (reachedGate = resolve));
    const held = new Proxy(first.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function' || property === 'info' || property === 'close') return value;
        return async (...args: unknown[]) => {
          reachedGate();
          await gate;
          return value.apply(target, args);
        };
      },
    });
    await withApp(1 << 20, async (app) => {
      current = held;
      const begun = get(app, '/organizations?per_page=2');
      await reached;
      current = second.store;
      open();
      const old = await begun;
      assert.equal(old.statusCode, 200);
      assert.equal(JSON.parse(old.body).total_items, publishedOrganizations.length, 'made from the first publish');
      const readsBefore = second.reads();
      const fresh = await get(app, '/organizations?per_page=2');
      assert.equal(JSON.parse(fresh.body).total_items, publishedOrganizations.length - 1, 'the new publish, not the response kept from the old');
      assert.notEqual(fresh.headers.etag, old.headers.etag);
      assert.ok(second.reads() > readsBefore, 'read from the new store');
    });
  });

  it('keeps neither errors nor streamed lists, and nothing at all when turned off', async () => {
    await withApp(1 << 20, async (app) => {
      for (const url of ['/organizations?format=ndjson', '/organizations?taxonomy_term_id=things:nothing', '/organizations/missing']) {
        await get(app, url);
        const reads = first.reads();
        await get(app, url);
        assert.ok(first.reads() > reads, url);
      }
      assert.equal(app.responseCache!.size.entries, 0);
    });
    await withApp(0, async (app) => {
      assert.equal(app.responseCache, undefined);
      await get(app, '/taxonomies');
      const reads = first.reads();
      await get(app, '/taxonomies');
      assert.equal(first.reads(), reads + 1);
    });
  });

  it('normalises the request target: trailing slash, parameter order and percent-encoding', () => {
    assert.equal(normalisedTarget('/a/b/'), '/a/b');
    assert.equal(normalisedTarget('/'), '/');
    assert.equal(normalisedTarget('/a?'), '/a');
    assert.equal(normalisedTarget('/a?b=2&a=1'), normalisedTarget('/a?a=%31&b=2'));
    assert.equal(normalisedTarget('/a?search=food%20bank'), normalisedTarget('/a?search=food+bank'));
    assert.notEqual(normalisedTarget('/a?search=a%26b'), normalisedTarget('/a?search=a&b'));
  });

  it('gives a target already normal back as it is, and any other as URLSearchParams writes it', () => {
    const written = (url: string) => {
      const mark = url.indexOf('?');
      const path = (mark === -1 ? url : url.slice(0, mark)).replace(/(.)\/+$/, '$1');
      const query = new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1));
      query.sort();
      return query.size === 0 ? path : `${path}?${query}`;
    };
    const targets = ['/a', '/a/', '/a//', '/a?page=3', '/a?page=3&per_page=5', '/a?per_page=5&page=3', '/a?a=1&a=2', '/a?a=2&a=1', '/a?b=1&a=2&a=1'];
    targets.push('/a?x', '/a?x=', '/a?x=1=2', '/a?a=b+c', '/a?a=%41', '/a?a=~', '/a?&a=1', '/a?a=1&', '/a/?a=1', '/a?A=1&a=1', '/a?a=1&A=1', '/a?a*.-_=Z9*.-_');
    for (const target of targets) assert.equal(normalisedTarget(target), written(target), target);
    const plain = '/api/hsds/v3/organizations?page=3&per_page=5';
    assert.equal(normalisedTarget(plain), plain);
  });
});
