import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_HARVEST } from '../../src/config.ts';
import { API, listenOnLoopback, temporaryDirectory } from '../helpers/app.ts';
import { servedAnswers } from '../helpers/round-trip.ts';
import { NATIVE_EXAMPLE, runCommand, serveDataDir } from '../helpers/imports.ts';
import type { ImportRun } from '../helpers/imports.ts';

/**
 * `import <HSDS API base URL>` against HSDS APIs on loopback, each started here: another instance of
 * this API; the official HSDS 3.2.3 examples served as fixed files; an API of HSDS 3.0's shape whose
 * lists are not full; one that answers 429 and 503 now and then; one whose dataset changes while it
 * is read; one that goes away half way.
 */

const FAST = { ...DEFAULT_HARVEST, requestsPerSecond: 0, timeoutMs: 5000, retryDelayMs: 10 };

describe('import of an HSDS API', () => {
  const original = temporaryDirectory();
  let upstream: { app: FastifyInstance; close: () => Promise<void> };
  let upstreamServer: Awaited<ReturnType<typeof listenOnLoopback>>;
  let expected: Map<string, string>;

  before(async () => {
    assert.equal((await runCommand('import', original.path, [NATIVE_EXAMPLE])).code, 0);
    const { app, stores } = await serveDataDir(original.path);
    upstream = { app, close: async () => (await app.close(), await stores.close()) };
    expected = await servedAnswers(app);
    upstreamServer = await listenOnLoopback((request, response) => app.routing(request, response));
  });
  after(async () => {
    await upstreamServer.close();
    await upstream.close();
    original.remove();
  });

  /** Imports `sources` into a new data directory and serves it to `check`. */
  async function harvested(sources: string[], check: (app: FastifyInstance, run: ImportRun) => Promise<void>, options = FAST): Promise<ImportRun> {
    const data = temporaryDirectory();
    try {
      const run = await runCommand('import', data.path, sources, { harvest: options });
      if (run.code === 0) {
        const { app, stores } = await serveDataDir(data.path);
        try {
          await check(app, run);
        } finally {
          await app.close();
          await stores.close();
        }
      }
      return run;
    } finally {
      data.remove();
    }
  }

  it('copies another instance of this API: every organization, taxonomy and term the same bytes, and the same dataset version', async () => {
    const run = await harvested([upstreamServer.base], async (app) => {
      assert.deepEqual(await servedAnswers(app), expected);
      const [mine, theirs] = await Promise.all([app.inject({ url: `${API}/` }), upstream.app.inject({ url: `${API}/` })]);
      assert.equal(JSON.parse(mine.body).dataset.version, JSON.parse(theirs.body).dataset.version);
    });
    assert.equal(run.code, 0, run.text);
    assert.match(run.text, /HSDS API read[\s\S]*read 4 organizations, 1 taxonomy and 5 taxonomy terms in \d+ requests/);
  });

  it('goes on through 429s and 503s, after the wait their Retry-After asks for', async () => {
    let requests = 0;
    let refused = 0;
    const flaky = await listenOnLoopback((request, response) => {
      requests++;
      if (requests % 3 === 0) {
        refused++;
        response.writeHead(requests % 2 === 0 ? 429 : 503, { 'retry-after': '0', 'content-type': 'application/json' }).end('{}');
        return;
      }
      upstream.app.routing(request, response);
    });
    try {
      const run = await harvested([flaky.base], async (app) => assert.deepEqual(await servedAnswers(app), expected));
      assert.equal(run.code, 0, run.text);
      assert.ok(refused > 2, `${refused} refused`);
      assert.match(run.text, /\(\d+ tried again\)/);
    } finally {
      await flaky.close();
    }
  });

  it('reads each organization at /organizations/{id} from an API of HSDS 3.0\'s shape, whose lists are not full', async () => {
    const detailsRead: string[] = [];
    const old = await listenOnLoopback(async (request, response) => {
      const url = new URL(request.url!, 'http://x');
      const answer = await upstream.app.inject({ url: `${url.pathname}${url.search.replace(/&?full=true/, '')}` });
      if (/\/organizations\/[^/]+$/.test(url.pathname)) detailsRead.push(url.pathname);
      let body = answer.body;
      if (answer.statusCode === 200 && answer.headers['content-type']?.toString().startsWith('application/json')) {
        const json = JSON.parse(body);
        delete json.empty;
        for (const item of json.contents ?? [json]) delete item.classifications;
        body = JSON.stringify(json);
      }
      response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type']) }).end(body);
    });
    try {
      const run = await harvested([old.base], async (app) => assert.deepEqual(await servedAnswers(app), expected));
      assert.equal(run.code, 0, run.text);
      assert.equal(detailsRead.length, 4);
    } finally {
      await old.close();
    }
  });

  it('serves the official HSDS 3.2.3 examples, read as an API of fixed files, as the files give them', async () => {
    const examples = new URL('../../vendor/hsds-3.2.3/examples/', import.meta.url);
    const file = (name: string) => readFileSync(new URL(`${name}.json`, examples));
    const fixed = await listenOnLoopback((request, response) => {
      const path = new URL(request.url!, 'http://x').pathname.slice(API.length);
      const name = path === '/' || path === '' ? 'base' : /^\/(organizations|taxonomies|taxonomy_terms)$/.test(path) ? `${path.slice(1).replace('ies', 'y').replace(/s$/, '')}_list` : /^\/(organizations|taxonomies|taxonomy_terms)\/[^/]+$/.test(path) ? (path.startsWith('/organizations') ? 'organization_full' : path.startsWith('/taxonomies') ? 'taxonomy' : 'taxonomy_term') : undefined;
      if (name === undefined) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(file(name));
    });
    try {
      const run = await harvested([fixed.base], async (app) => {
        const organization = JSON.parse(file('organization_full').toString());
        const [servedOrganization] = JSON.parse((await app.inject({ url: `${API}/organizations?full=true` })).body).contents;
        for (const field of ['id', 'name', 'alternate_name', 'description', 'email', 'website', 'tax_status', 'year_incorporated', 'legal_status', 'logo', 'uri', 'parent_organization_id']) {
          assert.deepEqual(servedOrganization[field], organization[field], field);
        }
        assert.deepEqual(
          servedOrganization.organization_identifiers.map(({ id, identifier_scheme, identifier_type, identifier }: Record<string, string>) => ({ id, identifier_scheme, identifier_type, identifier })),
          organization.organization_identifiers.map(({ id, identifier_scheme, identifier_type, identifier }: Record<string, string>) => ({ id, identifier_scheme, identifier_type, identifier })),
        );
        const [taxonomy] = JSON.parse((await app.inject({ url: `${API}/taxonomies` })).body).contents;
        const expectedTaxonomy = JSON.parse(file('taxonomy_list').toString()).contents[0];
        for (const field of ['id', 'name', 'description', 'uri', 'version']) assert.deepEqual(taxonomy[field], expectedTaxonomy[field], field);
      });
      assert.equal(run.code, 0, run.text);
      assert.match(run.text, /serves fixed pages, read once/);
    } finally {
      await fixed.close();
    }
  });

  it('starts over when the dataset changes while it is read, and publishes nothing when it keeps changing', async () => {
    let version = 0;
    const moving = await listenOnLoopback(async (request, response) => {
      const answer = await upstream.app.inject({ url: request.url! });
      let body = answer.body;
      if (new URL(request.url!, 'http://x').pathname === `${API}/`) {
        const root = JSON.parse(body);
        root.dataset.version = `000000000000000${version++ % 10}`;
        body = JSON.stringify(root);
      }
      response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type']) }).end(body);
    });
    try {
      const run = await harvested([moving.base], async () => assert.fail('nothing is published'));
      assert.equal(run.code, 1);
      assert.match(run.text, /the dataset changed while it was read, 3 times in a row/);
      assert.match(run.text, /Nothing was published/);
    } finally {
      await moving.close();
    }
  });

  it('publishes nothing when the API goes away half way, and says which URL failed', async () => {
    let requests = 0;
    const failing = await listenOnLoopback((request, response) => {
      if (++requests > 3) return void request.socket.destroy();
      upstream.app.routing(request, response);
    });
    try {
      const run = await harvested([failing.base], async () => assert.fail('nothing is published'), { ...FAST, timeoutMs: 1000 });
      assert.equal(run.code, 1);
      assert.match(run.text, new RegExp(`${failing.base.replaceAll('.', '\\.')}/\\w+\\?\\S*: the connection closed before an answer \\(UND_ERR_SOCKET\\) \\(tried 7 times\\)`));
      assert.match(run.text, /Nothing was published/);
    } finally {
      await failing.close();
    }
  });

  it('sends the key of HSDS_SOURCE_HEADER with every request, and never prints it', async () => {
    const seen = new Set<string | undefined>();
    const keyed = await listenOnLoopback((request, response) => {
      seen.add(request.headers.authorization);
      if (request.headers.authorization !== 'Bearer s3cret-key') return void response.writeHead(401).end();
      upstream.app.routing(request, response);
    });
    try {
      const run = await harvested([keyed.base], async (app) => assert.deepEqual(await servedAnswers(app), expected), { ...FAST, header: { name: 'Authorization', value: 'Bearer s3cret-key' } });
      assert.equal(run.code, 0, run.text);
      assert.deepEqual([...seen], ['Bearer s3cret-key']);
      assert.doesNotMatch(run.text, /s3cret/);
      const refused = await harvested([keyed.base], async () => assert.fail('nothing is published'));
      assert.match(refused.text, /answered 401/);
      assert.doesNotMatch(refused.text, /s3cret/);
    } finally {
      await keyed.close();
    }
  });

  it('combines with file sources in one import', async () => {
    const run = await harvested([upstreamServer.base, new URL('../../data/ntee/ntee_codes.csv', import.meta.url).pathname], async (app) => {
      const taxonomies = JSON.parse((await app.inject({ url: `${API}/taxonomies` })).body).contents.map((taxonomy: { code: string }) => taxonomy.code);
      assert.ok(taxonomies.includes('ntee'), taxonomies.join(', '));
      assert.equal(JSON.parse((await app.inject({ url: `${API}/organizations` })).body).total_items, 4);
    });
    assert.equal(run.code, 0, run.text);
  });
});
