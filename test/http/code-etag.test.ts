import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSnapshot } from '../../src/build/build.ts';
import { RENDERING_INPUTS, codeDigest } from '../../src/http/code-digest.ts';
import { fixtureDataset } from '../fixtures/dataset.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';

/**
 * Issue 37, point 4: an upgrade that renders differently must not be answered 304 for the old bytes.
 * The server's code is copied elsewhere; the copy, unchanged, must give the same ETags (instances
 * of one release agree wherever they are installed); changed in one rendering detail, it must give
 * new ones for the same snapshot.
 */

const PROJECT = new URL('../../', import.meta.url);
const ROOT_SOURCE = 'src/http/routes/meta.ts';
/** A rendering detail of the API root: the order of two of its links. */
const LINKS_IN_ORDER = 'openapi,\n            profile,\n';
const LINKS_SWAPPED = 'profile,\n            openapi,\n';

interface Server {
  get: (path: string, headers?: Record<string, string>) => Promise<{ status: number; etag: string | undefined; body: string }>;
  close: () => Promise<void>;
}

/** The app of the code under `root`, loaded from there, serving `snapshot`. */
async function serve(root: URL, snapshot: string, options: Record<string, unknown> = {}): Promise<Server> {
  const load = (path: string) => import(new URL(path, root).href);
  const [{ buildApp }, { SqliteStore }, { fixedStore }] = await Promise.all([load('src/http/app.ts'), load('src/store/sqlite/store.ts'), load('src/store/store.ts')]);
  const app = await buildApp({ stores: fixedStore(new SqliteStore(snapshot)), logLevel: 'silent', ...options });
  await app.ready();
  return {
    get: async (path, headers = {}) => {
      const response = await app.inject({ url: `${API}${path}`, headers: { host: 'api.example.org', ...headers } });
      return { status: response.statusCode, etag: response.headers.etag as string | undefined, body: response.body };
    },
    close: () => app.close(),
  };
}

/** A copy of the files the server is made of, with the project's node_modules linked in. */
function copyOfTheCode(into: string): URL {
  for (const input of RENDERING_INPUTS) {
    const from = fileURLToPath(new URL(input, PROJECT));
    const to = join(into, input);
    mkdirSync(dirname(to), { recursive: true });
    cpSync(from, to, { recursive: true });
  }
  symlinkSync(fileURLToPath(new URL('node_modules', PROJECT)), join(into, 'node_modules'));
  return pathToFileURL(`${into}/`);
}

describe('the ETag names the code that renders the response', () => {
  const directory = temporaryDirectory();
  const snapshot = join(directory.path, 'snapshot.sqlite');
  let copy: URL;
  /** Another copy, for the changed code: a module once imported stays as it was loaded. */
  let changed: URL;

  before(async () => {
    await buildSnapshot(fixtureDataset(), snapshot);
    copy = copyOfTheCode(join(directory.path, 'code'));
    changed = copyOfTheCode(join(directory.path, 'changed-code'));
  });
  after(() => directory.remove());

  it('is the same for the same code installed elsewhere, and new once a rendering detail changes, with the same data', async () => {
    assert.equal(codeDigest(copy), codeDigest(PROJECT), 'the digest does not depend on where the code is');
    const original = await serve(PROJECT, snapshot);
    const before = await original.get('/');
    await original.close();
    assert.equal(before.status, 200);

    const unchanged = await serve(copy, snapshot);
    const same = await unchanged.get('/');
    await unchanged.close();
    assert.deepEqual(same, before);

    const source = fileURLToPath(new URL(ROOT_SOURCE, changed));
    const text = readFileSync(source, 'utf8');
    assert.equal(text.split(LINKS_IN_ORDER).length, 2, `${ROOT_SOURCE} lists the root's links as this test expects`);
    writeFileSync(source, text.replace(LINKS_IN_ORDER, LINKS_SWAPPED));
    assert.notEqual(codeDigest(changed), codeDigest(PROJECT));

    const upgraded = await serve(changed, snapshot);
    try {
      const after = await upgraded.get('/');
      assert.equal(after.status, 200);
      assert.notEqual(after.body, before.body, 'the change shows in the bytes');
      assert.deepEqual(JSON.parse(after.body), JSON.parse(before.body), 'the same data');
      assert.notEqual(after.etag, before.etag);
      // A client or an edge holding the old bytes revalidates and gets the new ones, not a 304.
      const revalidated = await upgraded.get('/', { 'if-none-match': before.etag! });
      assert.equal(revalidated.status, 200);
      assert.equal(revalidated.body, after.body);
      assert.equal((await upgraded.get('/', { 'if-none-match': after.etag! })).status, 304);
    } finally {
      await upgraded.close();
    }
  });

  it('covers every file the server reads beside its modules (the bundled data aside: it reaches responses through a snapshot, whose version the ETag names)', () => {
    const sources = readdirSync(new URL('src/', PROJECT), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    const read: string[] = [];
    for (const file of sources) {
      const at = new URL(`src/${file}`, PROJECT);
      for (const [, relative] of readFileSync(at, 'utf8').matchAll(/new URL\('([^']+)', import\.meta\.url\)/g)) {
        read.push(new URL(relative!, at).href.slice(PROJECT.href.length));
      }
    }
    assert.ok(read.includes('docs/profile.md'), 'the scan finds what it looks for');
    const uncovered = read.filter((path) => path !== '' && path !== 'data/' && !RENDERING_INPUTS.some((input) => (input.endsWith('/') ? path.startsWith(input) : path === input)));
    assert.deepEqual(uncovered, []);
  });

  it('is new when a setting the responses show changes (the root details), with the same code and data', async () => {
    const plain = await serve(PROJECT, snapshot);
    const described = await serve(PROJECT, snapshot, { rootDetails: { description: 'Food banks of the county' } });
    try {
      const [before, after] = [await plain.get('/'), await described.get('/')];
      assert.notEqual(after.body, before.body);
      assert.notEqual(after.etag, before.etag);
      assert.equal((await described.get('/', { 'if-none-match': before.etag! })).status, 200);
    } finally {
      await plain.close();
      await described.close();
    }
  });
});
