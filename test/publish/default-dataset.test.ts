import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { organizationId, taxonomyTermId } from '../../src/hsds/ids.ts';
import type { Diagnostics } from '../../src/sources/files/diagnostics.ts';
import { API, getJson, startTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { defaultDatasetSample, WYOMING } from '../helpers/default-dataset-sample.ts';
import type { DatasetSample } from '../helpers/default-dataset-sample.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

/**
 * The shipped data, with one real IRS state file (Wyoming) instead of all 27 to keep the suite fast,
 * plus a hand-made state file for the edge cases.
 */
const wyomingRows = parse(gunzipSync(readFileSync(WYOMING)), { columns: true }) as Record<string, string>[];

const HEADER =
  'EIN,NAME,ICO,STREET,CITY,STATE,ZIP,GROUP,SUBSECTION,AFFILIATION,CLASSIFICATION,RULING,DEDUCTIBILITY,FOUNDATION,ACTIVITY,ORGANIZATION,STATUS,TAX_PERIOD,ASSET_CD,INCOME_CD,FILING_REQ_CD,PF_FILING_REQ_CD,ACCT_PD,ASSET_AMT,INCOME_AMT,REVENUE_AMT,NTEE_CD,SORT_NAME';
const handMade = [
  '990000001,FOOD BANK OF TESTING,% JANE PRIVATE,12 SECRET LANE,TOWN,WY,82001-0000,0000,03,3,1000,200001,1,15,000000000,1,01,202412,0,0,02,0,12,0,0,0,K31Z,',
  '990000002,UNKNOWN CODE CLUB,,1 MAIN ST,TOWN,WY,82001-0000,0000,07,3,1000,200001,2,00,000000000,5,01,202412,0,0,02,0,12,0,0,0,ZZZ,CHAPTER 9',
  '990000003,NO CODE SOCIETY,,,TOWN,WY,82001-0000,0000,91,3,1000,200001,2,00,000000000,0,01,,0,0,02,0,12,0,0,0,,',
];

describe('the default dataset', () => {
  let test: TestApp;
  let diagnostics: Diagnostics;
  let sample: DatasetSample;
  before(async () => {
    sample = await defaultDatasetSample({ 'eo_zz.csv': `${HEADER}\n${handMade.join('\n')}\n` });
    diagnostics = sample.diagnostics;
    test = await startTestApp(sample.input);
  });
  after(async () => {
    await test?.close();
    sample?.remove();
  });

  it('serves every IRS row as a published organization, and three taxonomies', async () => {
    assert.equal(test.build.organizations, wyomingRows.length + handMade.length);
    const { body } = await getJson(test.app, `${API}/taxonomies`);
    assert.deepEqual(
      body.contents.map((taxonomy: any) => taxonomy.code),
      ['ntee', 'oe_services', 'oe_situations'],
    );
    const counts = await Promise.all(
      ['ntee', 'oe_services', 'oe_situations'].map(async (code) => (await getJson(test.app, `${API}/taxonomy_terms?taxonomy=${code}`)).body.total_items),
    );
    assert.deepEqual(counts, [681, 291, 94]);
  });

  it('gives the duplicated Open Eligibility id 1206 a stable, unique code', async () => {
    const medical = await getJson(test.app, `${API}/taxonomy_terms/${taxonomyTermId('oe_services', '1206')}`);
    const primary = await getJson(test.app, `${API}/taxonomy_terms/${taxonomyTermId('oe_services', '1206-2')}`);
    assert.equal(medical.body.name, 'Medical Care');
    assert.equal(primary.body.name, 'Primary Care');
    assert.equal(primary.body.parent_id, medical.body.id);
  });

  it('tags by the first three characters of the NTEE code, adds crosswalk tags, and counts unknown codes', async () => {
    const { body } = await getJson(test.app, `${API}/organizations/${organizationId('990000001')}`);
    const tags = body.classifications.map((tag: any) => `${tag.taxonomy}:${tag.code}`);
    assert.equal(tags[0], 'ntee:K31');
    assert.ok(tags.includes('oe_services:1128'), `Food > Emergency Food in ${tags}`);
    assert.equal(body.tax_status, '501(c)(3)');
    assert.equal(body.legal_status, 'Corporation');
    assert.deepEqual(body.organization_identifiers.map((identifier: any) => [identifier.identifier_scheme, identifier.identifier]), [['US-EIN', '990000001']]);
    const unknown = await getJson(test.app, `${API}/organizations/${organizationId('990000002')}`);
    assert.deepEqual(unknown.body.classifications, []);
    assert.equal(unknown.body.alternate_name, 'CHAPTER 9');
    const unknownCodes = diagnostics.warnings.find((summary) => summary.kind === 'NTEE code not in the NTEE list')!;
    assert.ok(unknownCodes.count >= 1);
    assert.equal(diagnostics.errors.length, 0);
    const bare = await getJson(test.app, `${API}/organizations/${organizationId('990000003')}`);
    assert.equal(bare.body.tax_status, undefined);
    assert.equal(bare.body.legal_status, undefined);
  });

  it('never serves the in-care-of name or the street address', async () => {
    const { text } = await getJson(test.app, `${API}/organizations/${organizationId('990000001')}`);
    assert.doesNotMatch(text, /JANE PRIVATE|SECRET LANE/);
    // In-care-of names that are not also the organization's own name (many are).
    const withCareOf = wyomingRows
      .filter((row) => row.ICO!.startsWith('% ') && !`${row.NAME} ${row.SORT_NAME}`.includes(row.ICO!.slice(2)))
      .slice(0, 50);
    assert.equal(withCareOf.length, 50);
    for (const row of withCareOf) {
      const served = await getJson(test.app, `${API}/organizations/${organizationId(row.EIN!)}`);
      assert.equal(served.status, 200);
      assert.ok(!served.text.includes(row.ICO!.slice(2)), `ICO of ${row.EIN}`);
      if (row.STREET !== '') assert.ok(!served.text.includes(row.STREET!), `street of ${row.EIN}`);
    }
  });

  it('validates first, middle and last pages and single objects of every list against HSDS', async () => {
    for (const [list, listValidator, itemValidator] of [
      ['organizations', 'organizationList', 'organization'],
      ['taxonomies', 'taxonomyList', 'taxonomy'],
      ['taxonomy_terms', 'taxonomyTermList', 'taxonomyTerm'],
    ] as const) {
      const first = await getJson(test.app, `${API}/${list}?per_page=100`);
      const pages = [1, Math.ceil(first.body.total_pages / 2), first.body.total_pages];
      for (const page of pages) {
        const { body } = await getJson(test.app, `${API}/${list}?per_page=100&page=${page}`);
        assertHsds(listValidator, body);
        for (const item of body.contents.slice(0, 10)) {
          const single = await getJson(test.app, `${API}/${list}/${item.id}`);
          assert.equal(single.status, 200);
          assertHsds(itemValidator, single.body);
        }
      }
    }
  });
});
