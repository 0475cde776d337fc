import { join } from 'node:path';
import { describeExport } from '../helpers/export-comparison.ts';
import type { ExportExpected } from '../helpers/export-comparison.ts';

/**
 * Imports the two HSDS exports of sarapis/orservices (a DC directory, with the edits of people trying
 * the application), as they are, and compares what is served with their files field by field. They
 * are not in this repository (it has no licence; see README.md here): give a checkout of the
 * repository in ORSERVICES. Run with `npm run check:orservices`.
 */

const checkout = process.env.ORSERVICES;
if (checkout === undefined || checkout === '') throw new Error('set ORSERVICES to a checkout of sarapis/orservices (see test/external/README.md)');

const EXPORTS: (ExportExpected & { folder: string })[] = [
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

for (const { folder, ...expected } of EXPORTS) describeExport(`sarapis/orservices ${folder}`, join(checkout, folder), expected);
