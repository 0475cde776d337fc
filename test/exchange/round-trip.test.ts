import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { unzipSync } from 'fflate';
import type { FastifyInstance } from 'fastify';
import { runExport } from '../../src/cli/export.ts';
import { plainCsvField } from '../../src/http/csv.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { checkEveryResponse } from '../helpers/hsds-schemas.ts';
import { NATIVE_EXAMPLE, runCommand, serveDataDir } from '../helpers/imports.ts';
import { validateTabularPackage } from '../helpers/table-schema.ts';

/**
 * The exchange's round trip: a dataset exported as an HSDS tabular package (GET /datapackage.zip, or
 * the `export` command: the same files) validates against its own datapackage.json, and importing
 * it into a fresh data directory serves the same bytes at every endpoint. Datasets nobody here wrote:
 * the official HSDS 3.0 and 3.2.3 examples, and the Open Referral sample datapackage; and the
 * native example of docs/. (The bundled dataset: round-trip.slow.ts; Open211 Miami: see
 * test/external/README.md.)
 */

const VENDOR = new URL('../../vendor/', import.meta.url).pathname;
const EXTERNAL = new URL('../fixtures/external/', import.meta.url).pathname;

/** A source folder for the import: a folder as it is, or the 3.0 example with the descriptor its folder links to. */
const DATASETS: Array<{ name: string; files: () => Record<string, Buffer> }> = [
  { name: 'the native example of docs/', files: () => folderFiles(NATIVE_EXAMPLE) },
  { name: 'the official HSDS 3.0 example', files: () => ({ ...folderFiles(join(VENDOR, 'hsds-3.0/examples/csv')), 'datapackage.json': readFileSync(join(VENDOR, 'hsds-3.0/datapackage.json')) }) },
  { name: 'the official HSDS 3.2.3 example', files: () => folderFiles(join(VENDOR, 'hsds-3.2.3/examples/csv')) },
  { name: 'the Open Referral sample datapackage (all_resources)', files: () => folderFiles(join(EXTERNAL, 'sample-hsds-datapackage/all_resources')) },
];

function folderFiles(folder: string): Record<string, Buffer> {
  return Object.fromEntries(readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => {
    const path = join(entry.parentPath, entry.name);
    return [path.slice(folder.length + 1), readFileSync(path)];
  }));
}

/** Every JSON the API serves for a dataset, by path: the root (its publish time aside), each list whole and by page, each item by id. */
async function everything(app: FastifyInstance): Promise<Map<string, string>> {
  const served = new Map<string, string>();
  const get = async (path: string): Promise<string> => {
    const response = await app.inject({ url: `${API}${path}` });
    assert.equal(response.statusCode, 200, `${path}: ${response.body}`);
    served.set(path, response.body);
    return response.body;
  };
  const root = JSON.parse(await get('/')) as { dataset: Record<string, unknown> };
  delete root.dataset.published_at;
  served.set('/', JSON.stringify(root));
  for (const list of ['organizations', 'taxonomies', 'taxonomy_terms']) {
    const lines = (await get(`/${list}?format=ndjson`)).split('\n').filter((line) => line !== '');
    const pages = Math.max(1, Math.ceil(lines.length / 2));
    for (let page = 1; page <= pages; page++) await get(`/${list}?per_page=2&page=${page}`);
    for (const line of lines) await get(`/${list}/${(JSON.parse(line) as { id: string }).id}`);
  }
  await get('/organizations?format=ndjson&full=true');
  await get('/organizations?format=csv');
  return served;
}

for (const dataset of DATASETS) {
  describe(`a round trip of ${dataset.name} through its HSDS tabular package`, () => {
    it('exports a package that validates against its own datapackage.json, and that imports to the same bytes at every endpoint', async () => {
      const source = temporaryDirectory();
      const first = temporaryDirectory();
      const second = temporaryDirectory();
      const exported = temporaryDirectory();
      try {
        for (const [name, content] of Object.entries(dataset.files())) {
          mkdirSync(join(source.path, name, '..'), { recursive: true });
          writeFileSync(join(source.path, name), content);
        }
        const run = await runCommand('import', first.path, [source.path]);
        assert.equal(run.code, 0, run.text);
        const original = await serveDataDir(first.path);
        const invalid = checkEveryResponse(original.app);
        const packageFolder = join(exported.path, 'from-http');
        let before: Map<string, string>;
        try {
          const response = await original.app.inject({ url: `${API}/datapackage.zip` });
          assert.equal(response.statusCode, 200, response.body);
          assert.equal(response.headers['content-type'], 'application/zip');
          assert.equal(Number(response.headers['content-length']), response.rawPayload.length);
          mkdirSync(packageFolder);
          for (const [name, bytes] of Object.entries(unzipSync(new Uint8Array(response.rawPayload)))) writeFileSync(join(packageFolder, name), bytes);
          before = await everything(original.app);
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
        const outside = /^warning: \d+ × (term of a taxonomy not in the package|term whose parent is not in its taxonomy in the package|parent organization not in the input), e\.g\.$/;
        assert.deepEqual(warnings.filter((line) => !outside.test(line)), [], again.text);
        const copy = await serveDataDir(second.path);
        try {
          const after = await everything(copy.app);
          assert.deepEqual([...after.keys()], [...before.keys()]);
          for (const [path, body] of before) assert.equal(after.get(path), body, path);
        } finally {
          await copy.app.close();
          await copy.stores.close();
        }
      } finally {
        for (const folder of [source, first, second, exported]) folder.remove();
      }
    });
  });
}

describe('the package check (test/helpers/table-schema.ts)', () => {
  it('finds a value of the wrong type, a missing required value, a repeated key and a reference to nothing', async () => {
    const data = temporaryDirectory();
    const folder = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
      const target = join(folder.path, 'package');
      assert.equal(await runExport({ dataDir: data.path, databaseUrl: undefined, directory: target }, () => {}, () => {}), 0);
      assert.deepEqual(validateTabularPackage(target), []);
      const broken = join(folder.path, 'broken');
      cpSync(target, broken, { recursive: true });
      const rewrite = (file: string, change: (rows: string[][]) => void) => {
        const rows = parse(readFileSync(join(broken, file))) as string[][];
        change(rows);
        writeFileSync(join(broken, file), rows.map((row) => `${row.map(plainCsvField).join(',')}\r\n`).join(''));
      };
      rewrite('organizations.csv', ([header, first, second]) => {
        first![header!.indexOf('year_incorporated')] = 'nineteen';
        first![header!.indexOf('name')] = '';
        second![0] = first![0]!;
      });
      rewrite('organization_identifiers.csv', ([header, first]) => {
        first![header!.indexOf('organization_id')] = '00000000-0000-4000-8000-000000000000';
      });
      const found = validateTabularPackage(broken).map(({ resource, field, message }) => `${resource}.${field ?? ''}: ${message}`);
      assert.ok(found.some((line) => /^organization\.year_incorporated: "nineteen" is not a number/.test(line)), found.join('\n'));
      assert.ok(found.some((line) => /^organization\.name: is required and missing/.test(line)), found.join('\n'));
      assert.ok(found.some((line) => /^organization\.: primary key .* repeated/.test(line)), found.join('\n'));
      assert.ok(found.some((line) => /^organization_identifier\.organization_id: 00000000-0000-4000-8000-000000000000 names no row of organization/.test(line)), found.join('\n'));
    } finally {
      data.remove();
      folder.remove();
    }
  });
});
