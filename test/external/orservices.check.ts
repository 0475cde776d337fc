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
 * Imports the two HSDS exports of sarapis/orservices (a DC directory, with the edits of people trying
 * the application), as they are, and compares what is served with their files field by field. They
 * are not in this repository (it has no licence; see README.md here): give a checkout of the
 * repository in ORSERVICES. Run with `npm run check:orservices`.
 */

const checkout = process.env.ORSERVICES;
if (checkout === undefined || checkout === '') throw new Error('set ORSERVICES to a checkout of sarapis/orservices (see test/external/README.md)');

interface Expected {
  folder: string;
  published: string;
  warnings: Record<string, number>;
  organizations: number;
  terms: number;
  websitesGivenHttp: number;
  /** Dropped values, as `field: value`, in file order. */
  dropped: string[];
}

const EXPORTS: Expected[] = [
  {
    folder: 'public/csv_export/datapackage',
    published: '216 organizations (0 unpublished left out), 2 taxonomies, 432 taxonomy terms',
    warnings: {
      'file not read': 1,
      'term whose parent is not in its taxonomy in the package': 70,
      'invalid year_incorporated dropped': 4,
      'invalid url dropped': 1,
      'tag of a service not in the package': 2534,
    },
    organizations: 216,
    terms: 432,
    websitesGivenHttp: 0,
    dropped: [
      'year_incorporated: test31',
      'year_incorporated: test',
      'year_incorporated: test8',
      'url: http://example.com edit',
      'year_incorporated: Year Incorporated: - edit',
    ],
  },
  {
    folder: 'public/HSDS',
    published: '452 organizations (0 unpublished left out), 0 taxonomies, 22 taxonomy terms',
    warnings: {
      'file not read': 1,
      'website without http(s)://, served with http://': 12,
      'tag naming a term not in the package': 5004,
      'tag of a service not in the package': 5004,
    },
    organizations: 452,
    terms: 22,
    websitesGivenHttp: 12,
    dropped: [],
  },
];

for (const expected of EXPORTS) {
  describe(`sarapis/orservices ${expected.folder}, imported as it is`, () => {
    const folder = join(checkout, expected.folder);
    const data = temporaryDirectory();
    let run: ImportRun;
    let app: FastifyInstance;
    let invalid: string[];
    let comparison: ExportComparison;
    before(async () => {
      run = await runCommand('import', data.path, [folder]);
      ({ app } = await serveDataDir(data.path));
      invalid = checkEveryResponse(app);
      comparison = await compareWithInput(folder, app);
    });
    after(async () => {
      await app?.close();
      data.remove();
    });

    it('publishes (exit 0), with the summary expected', () => {
      console.log(run.text);
      assert.equal(run.code, 0, run.text);
      assert.ok(run.results[0]?.includes(`: ${expected.published};`), run.results.join('\n'));
      assert.deepEqual(warningCounts(run), expected.warnings);
    });

    it('serves every organization and term, each field as its rule says; counts what was dropped and why', () => {
      assert.equal(comparison.organizations, expected.organizations);
      assert.equal(comparison.terms, expected.terms);
      assert.equal(comparison.websitesGivenHttp, expected.websitesGivenHttp);
      assert.deepEqual(comparison.dropped.map(({ field, value }) => `${field}: ${value}`), expected.dropped);
      // The same counts as the import's summary gives.
      const summary = Object.fromEntries(Object.entries(warningCounts(run)).filter(([kind]) => kind.endsWith(' dropped')));
      assert.deepEqual(droppedByKind(comparison.dropped), summary);
    });

    it('serves only valid HSDS 3.0 and 3.2.3', () => {
      assert.deepEqual(invalid, []);
    });
  });
}
