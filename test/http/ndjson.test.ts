import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/http/app.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { StoreProvider } from '../../src/store/store.ts';
import { bulkOrganizations, fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, getJson, temporaryDirectory, useTestApp } from '../helpers/app.ts';
import type { ValidatorName } from '../helpers/hsds-schemas.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';
import { waitFor } from '../helpers/wait.ts';

const lines = (text: string): any[] => {
  assert.ok(text.endsWith('\n'), 'every line ends with a newline');
  return text.slice(0, -1).split('\n').map((line) => JSON.parse(line));
};

describe('format=ndjson', () => {
  const test = useTestApp();
  const ndjson = async (url: string) => {
    const response = await test().app.inject({ url: `${API}${url}` });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    return lines(response.body);
  };
  /** Every item of a paged list, following `next` links. */
  const allPages = async (url: string): Promise<any[]> => {
    const items: any[] = [];
    let next: string | undefined = `${API}${url}${url.includes('?') ? '&' : '?'}per_page=7`;
    while (next !== undefined) {
      const { body } = await getJson(test().app, next);
      items.push(...body.contents);
      next = body.links.next === undefined ? undefined : new URL(body.links.next).pathname + new URL(body.links.next).search;
    }
    return items;
  };

  const cases: [string, ValidatorName][] = [
    ['/organizations', 'organization'],
    ['/organizations?full=true', 'organization'],
    ['/organizations?taxonomy_term_id=Colors:red', 'organization'],
    ['/organizations?taxonomy_id=colors&search=helps', 'organization'],
    ['/taxonomies', 'taxonomy'],
    ['/taxonomy_terms', 'taxonomyTerm'],
    ['/taxonomy_terms?taxonomy=things&top_only=1', 'taxonomyTerm'],
  ];
  for (const [url, validator] of cases) {
    it(`${url}: every matching item, one valid HSDS object per line, in list order`, async () => {
      const items = await ndjson(`${url}${url.includes('?') ? '&' : '?'}format=ndjson`);
      for (const item of items) assertHsds(validator, item);
      assert.deepEqual(items, await allPages(url));
    });
  }

  it('ignores paging, and gives an empty body for an empty list', async () => {
    assert.equal((await ndjson('/organizations?format=ndjson&page=3&per_page=1')).length, publishedOrganizations.length);
    const response = await test().app.inject({ url: `${API}/organizations?format=ndjson&taxonomy_term_id=things:A&taxonomy_id=Colors` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, '');
  });

  it('400 for another format, and for a bad filter before streaming starts', async () => {
    for (const query of ['format=xml', 'format=csv&taxonomy_term_id=nope:x', 'format=ndjson&taxonomy_term_id=nope:x', 'format=ndjson&full=maybe']) {
      const { status, headers } = await getJson(test().app, `${API}/organizations?${query}`);
      assert.equal(status, 400, query);
      assert.match(String(headers['content-type']), /^application\/problem\+json/);
    }
  });

  it('answers HEAD with the headers only', async () => {
    const response = await test().app.inject({ method: 'HEAD', url: `${API}/organizations?format=ndjson` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.equal(response.body, '');
  });
});

describe('format=ndjson over a real connection', () => {
  const many = bulkOrganizations(3000);

  it('keeps the dataset open until the stream ends, and releases it when a client leaves mid-stream', async () => {
    const directory = temporaryDirectory();
    const file = join(directory.path, 'snapshot.sqlite');
    await buildSnapshot(fixtureDataset({ organizations: many }), file);
    const store = new SqliteStore(file);
    let leases = 0;
    const released: number[] = [];
    const stores: StoreProvider = {
      acquire: () => {
        leases++;
        let done = false;
        return {
          store,
          release: () => {
            if (done) return;
            done = true;
            leases--;
            released.push(Date.now());
          },
        };
      },
      readiness: async () => ({ ready: true }),
      close: () => store.close(),
    };
    const app = await buildApp({ stores, logLevel: 'silent' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}${API}/organizations?format=ndjson&full=true`;
    try {
      // A slow reader: the server must wait (back-pressure) with the lease held, then finish.
      let leasesWhilePaused = -1;
      const count = await new Promise<number>((resolve, reject) => {
        request(url, (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.pause();
          setTimeout(() => {
            leasesWhilePaused = leases;
            response.resume();
          }, 200);
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(lines(text).length));
          response.on('error', reject);
        })
          .on('error', reject)
          .end();
      });
      assert.equal(leasesWhilePaused, 1, 'held while the client is not reading (15 MB cannot all be in socket buffers)');
      assert.equal(count, many.length);
      await waitFor(() => leases === 0);

      // A client that goes away after the first chunk.
      await new Promise<void>((resolve, reject) => {
        const outgoing = request(url, (response) => {
          response.once('data', () => {
            outgoing.destroy();
            resolve();
          });
        });
        outgoing.on('error', () => {});
        outgoing.on('close', () => resolve());
        outgoing.end();
        setTimeout(() => reject(new Error('no data')), 5000);
      });
      await waitFor(() => leases === 0);
      // The store still answers: nothing was closed under a live request.
      assert.equal((await store.organizations({}, { first: 1, count: 1 })).total, many.length);
    } finally {
      await app.close();
      directory.remove();
    }
  });
});
