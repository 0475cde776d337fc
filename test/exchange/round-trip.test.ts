import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { runExport } from '../../src/cli/export.ts';
import { plainCsvField } from '../../src/http/csv.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, runCommand } from '../helpers/imports.ts';
import { assertRoundTrip } from '../helpers/round-trip.ts';
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

for (const dataset of DATASETS) {
  describe(`a round trip of ${dataset.name} through its HSDS tabular package`, () => {
    it('exports a package that validates against its own datapackage.json, and that imports to the same bytes at every endpoint', async () => {
      const source = temporaryDirectory();
      try {
        for (const [name, content] of Object.entries(dataset.files())) {
          mkdirSync(join(source.path, name, '..'), { recursive: true });
          writeFileSync(join(source.path, name), content);
        }
        await assertRoundTrip([source.path]);
      } finally {
        source.remove();
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
