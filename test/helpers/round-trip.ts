import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import type { FastifyInstance } from 'fastify';
import { runExport } from '../../src/cli/export.ts';
import { API, temporaryDirectory } from './app.ts';
import { checkEveryResponse } from './hsds-schemas.ts';
import { runCommand, serveDataDir } from './imports.ts';
import { validateTabularPackage } from './table-schema.ts';

/**
 * The exchange's round trip of one dataset: imported from its source, exported as an HSDS tabular
 * package (GET /datapackage.zip, and the `export` command: the same files), the package validated
 * against its own datapackage.json, imported into a fresh data directory, and every endpoint of the
 * copy compared with the original's, byte for byte. `everyItem`: false to compare the lists (whole
 * and a few pages) but not each item by id (for 326,224 organizations, the lists say it all).
 */
export async function assertRoundTrip(sources: string[], options: { everyItem?: boolean } = {}): Promise<{ tables: Map<string, Buffer> }> {
  const first = temporaryDirectory();
  const second = temporaryDirectory();
  const exported = temporaryDirectory();
  try {
    const run = await runCommand('import', first.path, sources);
    assert.equal(run.code, 0, run.text);
    const original = await serveDataDir(first.path);
    const invalid = checkEveryResponse(original.app);
    const packageFolder = join(exported.path, 'from-http');
    let before: Map<string, string>;
    try {
      const response = await packageOf(original.app);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], 'application/zip');
      assert.equal(Number(response.headers['content-length']), response.rawPayload.length);
      mkdirSync(packageFolder);
      for (const [name, bytes] of Object.entries(unzipSync(new Uint8Array(response.rawPayload)))) writeFileSync(join(packageFolder, name), bytes);
      before = await servedAnswers(original.app, options.everyItem ?? true);
      assert.deepEqual(invalid, []);
    } finally {
      await original.app.close();
      await original.stores.close();
    }

    // The export command writes the same files.
    const commandFolder = join(exported.path, 'from-command');
    const printed: string[] = [];
    assert.equal(await runExport({ dataDir: first.path, databaseUrl: undefined, directory: commandFolder }, (line) => printed.push(line), (line) => printed.push(line)), 0, printed.join('\n'));
    assert.deepEqual(readdirSync(commandFolder).sort(), readdirSync(packageFolder).sort());
    for (const name of readdirSync(packageFolder)) assert.ok(readFileSync(join(commandFolder, name)).equals(readFileSync(join(packageFolder, name))), name);

    assert.deepEqual(validateTabularPackage(packageFolder), []);

    const again = await runCommand('import', second.path, [packageFolder]);
    assert.equal(again.code, 0, again.text);
    // Warnings only for what the data refers to outside itself, as it was served (HSDS allows it).
    const warnings = again.output.filter((line) => line.startsWith('warning:'));
    const outside = /^warning: [\d,]+ × (term of a taxonomy not in the package|term whose parent is not in its taxonomy in the package|parent organization not in the input), e\.g\.$/;
    assert.deepEqual(warnings.filter((line) => !outside.test(line)), [], again.text);
    const copy = await serveDataDir(second.path);
    const tables = new Map<string, Buffer>();
    try {
      const after = await servedAnswers(copy.app, options.everyItem ?? true);
      assert.deepEqual([...after.keys()], [...before.keys()]);
      for (const [path, body] of before) assert.equal(after.get(path), body, path);
      // The copy's package: the same tables, byte for byte (its descriptor names the copy's own publish time).
      const response = await packageOf(copy.app);
      assert.equal(response.statusCode, 200, response.body);
      for (const [name, bytes] of Object.entries(unzipSync(new Uint8Array(response.rawPayload)))) {
        tables.set(name, Buffer.from(bytes));
        if (name !== 'datapackage.json') assert.ok(Buffer.from(bytes).equals(readFileSync(join(packageFolder, name))), `the copy's ${name}`);
      }
    } finally {
      await copy.app.close();
      await copy.stores.close();
    }
    return { tables };
  } finally {
    for (const folder of [first, second, exported]) folder.remove();
  }
}

/**
 * Every JSON the API serves for a dataset, by path, as a SHA-256 of its bytes: the root (its publish
 * time aside), each list whole (NDJSON, full documents, CSV) and by pages, each item by id.
 */
export async function servedAnswers(app: FastifyInstance, everyItem = true): Promise<Map<string, string>> {
  const served = new Map<string, string>();
  const get = async (path: string): Promise<string> => {
    const response = await app.inject({ url: `${API}${path}` });
    assert.equal(response.statusCode, 200, `${path}: ${response.body.slice(0, 500)}`);
    served.set(path, hash('sha256', response.rawPayload, 'hex'));
    return response.body;
  };
  const root = JSON.parse(await get('/')) as { dataset: Record<string, unknown> };
  delete root.dataset.published_at;
  served.set('/', JSON.stringify(root));
  for (const list of ['organizations', 'taxonomies', 'taxonomy_terms']) {
    const lines = (await get(`/${list}?format=ndjson`)).split('\n').filter((line) => line !== '');
    const pages = everyItem ? Math.max(1, Math.ceil(lines.length / 2)) : 3;
    for (let page = 1; page <= pages; page++) await get(`/${list}?per_page=2&page=${page}`);
    if (everyItem) for (const line of lines) await get(`/${list}/${(JSON.parse(line) as { id: string }).id}`);
  }
  await get('/organizations?format=ndjson&full=true');
  await get('/organizations?format=csv');
  return served;
}

/**
 * GET /datapackage.zip as a client does: the route waits 20 s for a package being made, then answers
 * 503 with Retry-After, and the package goes on being made (on a loaded machine the bundled dataset's
 * takes longer). Asked again at once: each ask waits its 20 s, up to six.
 */
async function packageOf(app: FastifyInstance) {
  let response = await app.inject({ url: `${API}/datapackage.zip` });
  for (let ask = 1; ask < 6 && response.statusCode === 503 && response.headers['retry-after'] !== undefined; ask++) response = await app.inject({ url: `${API}/datapackage.zip` });
  return response;
}
