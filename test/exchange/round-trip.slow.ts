import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';
import { assertRoundTrip } from '../helpers/round-trip.ts';

/**
 * The round trip of test/exchange/round-trip.test.ts for the bundled dataset (326,224 organizations
 * from the IRS, NTEE and Open Eligibility): its package imports to the same bytes at every list, whole
 * and by page, and to the same package tables.
 */
describe('a round trip of the bundled dataset through its HSDS tabular package', () => {
  it('imports to the same bytes at every list and the same package tables', async () => {
    const { tables } = await assertRoundTrip([DEFAULT_DATA_DIR], { everyItem: false });
    assert.ok(tables.get('organizations.csv')!.length > 40_000_000, 'the whole dataset');
  });
});
