import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Diagnostics } from '../../../src/sources/files/diagnostics.ts';
import { vocabularyOf } from '../../../src/sources/combine.ts';
import { irsSource } from '../../../src/sources/irs-bmf.ts';
import { temporaryDirectory } from '../../helpers/app.ts';

/** The header of the IRS's state files, as published. */
const HEADER =
  'EIN,NAME,ICO,STREET,CITY,STATE,ZIP,GROUP,SUBSECTION,AFFILIATION,CLASSIFICATION,RULING,DEDUCTIBILITY,FOUNDATION,ACTIVITY,ORGANIZATION,STATUS,TAX_PERIOD,ASSET_CD,INCOME_CD,FILING_REQ_CD,PF_FILING_REQ_CD,ACCT_PD,ASSET_AMT,INCOME_AMT,REVENUE_AMT,NTEE_CD,SORT_NAME';
const row = (ein: string, name: string, organization: string) => `${ein},${name},,,,WY,,0000,03,3,1200,202312,1,15,000000000,${organization},01,202512,0,0,02,0,12,0,0,0,,`;

describe('IRS state files', () => {
  it('serves the legal status of the IRS codes 1 to 5, and none for any other value (whatever its name)', async () => {
    const directory = temporaryDirectory();
    try {
      const file = join(directory.path, 'eo_wy.csv');
      writeFileSync(file, `${HEADER}\n${[row('010000001', 'A TRUST', '2'), row('010000002', 'ODD ONE', 'constructor'), row('010000003', 'ODD TWO', '9')].join('\n')}\n`);
      const source = irsSource(directory.path, [file]);
      const organizations = [];
      for await (const organization of source.organizations!({ diagnostics: new Diagnostics() }, vocabularyOf([], []))) organizations.push(organization);
      assert.deepEqual(
        organizations.map(({ name, legalStatus }) => [name, legalStatus]),
        [
          ['A TRUST', 'Trust'],
          ['ODD ONE', undefined],
          ['ODD TWO', undefined],
        ],
      );
    } finally {
      directory.remove();
    }
  });
});
