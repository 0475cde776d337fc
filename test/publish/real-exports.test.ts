import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { temporaryDirectory } from '../helpers/app.ts';
import { compareWithInput, droppedByKind, warningCounts } from '../helpers/export-comparison.ts';
import type { ExportComparison } from '../helpers/export-comparison.ts';
import { checkEveryResponse } from '../helpers/hsds-schemas.ts';
import { runCommand, serveDataDir } from '../helpers/imports.ts';
import type { ImportRun } from '../helpers/imports.ts';

/**
 * Real exports, copied unedited from public repositories into test/fixtures/external/ (each folder's
 * SOURCE.md says from where, and under which licence), imported as they are and compared field by
 * field with their own files. sarapis/orservices' exports, which have no licence, are checked the
 * same way by hand: test/external/orservices.check.ts.
 */

const EXTERNAL = join(import.meta.dirname, '..', 'fixtures', 'external');

interface RealExport {
  folder: string;
  /** The summary's line, after "Published dataset <version>: ". */
  published: string;
  warnings: Record<string, number>;
  terms: number;
}

const EXPORTS: RealExport[] = [
  {
    folder: 'sample-hsds-datapackage/all_resources',
    published: '10 organizations (0 unpublished left out), 1 taxonomy, 1 taxonomy term',
    warnings: { 'file not read': 1, 'term whose parent is not in its taxonomy in the package': 1 },
    terms: 1,
  },
  {
    folder: 'sample-hsds-datapackage/simple',
    published: '10 organizations (0 unpublished left out), 0 taxonomies, 0 taxonomy terms',
    warnings: { 'file not read': 1 },
    terms: 0,
  },
];

for (const { folder, published, warnings, terms } of EXPORTS) {
  describe(`${folder}, imported as it is`, () => {
    const data = temporaryDirectory();
    let run: ImportRun;
    let app: FastifyInstance;
    let invalid: string[];
    let comparison: ExportComparison;
    before(async () => {
      run = await runCommand('import', data.path, [join(EXTERNAL, folder)]);
      ({ app } = await serveDataDir(data.path));
      invalid = checkEveryResponse(app);
      comparison = await compareWithInput(join(EXTERNAL, folder), app);
    });
    after(async () => {
      await app?.close();
      data.remove();
    });

    it('publishes (exit 0), with the summary expected', () => {
      assert.equal(run.code, 0, run.text);
      assert.match(run.results.join('\n'), new RegExp(`^Published dataset [0-9a-f]{16}: ${published.replace(/[()]/g, '\\$&')};`));
      assert.deepEqual(warningCounts(run), warnings);
    });

    it('serves every organization and term, each field as its rule says, and drops nothing', () => {
      assert.equal(comparison.organizations, 10);
      assert.equal(comparison.terms, terms);
      assert.deepEqual(comparison.dropped, []);
      assert.deepEqual(droppedByKind(comparison.dropped), {});
    });

    it('serves only valid HSDS 3.0 and 3.2.3', () => {
      assert.deepEqual(invalid, []);
    });
  });
}
