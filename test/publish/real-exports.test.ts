import { join } from 'node:path';
import { describeExport } from '../helpers/export-comparison.ts';
import type { ExportExpected } from '../helpers/export-comparison.ts';

/**
 * Real exports, copied unedited from public repositories into test/fixtures/external/ (each folder's
 * SOURCE.md says from where, and under which licence), imported as they are and compared field by
 * field with their own files. sarapis/orservices' exports, which have no licence, are checked the
 * same way by hand: test/external/orservices.check.ts.
 */

const EXTERNAL = join(import.meta.dirname, '..', 'fixtures', 'external');

const EXPORTS: (ExportExpected & { folder: string })[] = [
  {
    folder: 'sample-hsds-datapackage/all_resources',
    published: '10 organizations (0 unpublished left out), 1 taxonomy, 1 taxonomy term',
    warnings: { 'file not read': 1, 'term whose parent is not in its taxonomy in the package': 1 },
    organizations: 10,
    terms: 1,
    websitesGivenHttp: 0,
    dropped: [],
  },
  {
    folder: 'sample-hsds-datapackage/simple',
    published: '10 organizations (0 unpublished left out), 0 taxonomies, 0 taxonomy terms',
    warnings: { 'file not read': 1 },
    organizations: 10,
    terms: 0,
    websitesGivenHttp: 0,
    dropped: [],
  },
];

for (const { folder, ...expected } of EXPORTS) describeExport(folder, join(EXTERNAL, folder), expected);
