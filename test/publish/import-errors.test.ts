import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { organizationId } from '../../src/hsds/ids.ts';
import { currentSnapshotPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';

const example = (name: string): string => readFileSync(join(NATIVE_EXAMPLE, name), 'utf8');
const ORGANIZATIONS = example('organizations.csv');
const TERMS = example('taxonomy_terms.csv');
const TAGS = example('organization_tags.csv');
/** Line 7 of organizations.csv, after the header and the five example rows. */
const appendOrganization = (row: string): string => `${ORGANIZATIONS}${row}\n`;

interface ErrorCase {
  label: string;
  files: Record<string, string | Buffer>;
  /** file:line [field]: reason, as printed. */
  expected: RegExp;
  /** The only error printed. */
  reportedOnce?: boolean;
}

const cases: ErrorCase[] = [
  {
    label: 'a missing required column',
    files: { 'organizations.csv': ORGANIZATIONS.replace(',status,', ',state,') },
    expected: /organizations\.csv:1 \[status\]: missing required column "status"/,
  },
  {
    label: 'an unterminated quote',
    files: { 'organizations.csv': appendOrganization('SPR-009,"Broken Name,published,,,,,,,,,,') },
    expected: /organizations\.csv:7: malformed CSV: a quoted field is never closed \(unterminated quote\), in the record after line 6/,
  },
  {
    label: 'a row with the wrong number of columns',
    files: { 'organizations.csv': appendOrganization('SPR-009,Too Many,published,,,,,,,,,,,extra') },
    expected: /organizations\.csv:7: malformed CSV: 14 fields where the header has 13/,
  },
  {
    label: 'bytes that are not UTF-8',
    files: { 'organizations.csv': Buffer.concat([Buffer.from(ORGANIZATIONS), Buffer.from('SPR-009,Caf'), Buffer.from([0xe9]), Buffer.from(' Latin-1,published,,,,,,,,,,\n')]) },
    expected: /organizations\.csv:7: the file is not UTF-8: byte 0xE9 after "Caf" looks like Latin-1\/Windows-1252 \("Café"\); save it as UTF-8/,
  },
  {
    label: 'an empty file',
    files: { 'organization_tags.csv': '' },
    expected: /organization_tags\.csv: the file is empty \(expected a header row\)/,
  },
  {
    label: 'a duplicate native id',
    files: { 'organizations.csv': appendOrganization('SPR-001,Second Food Bank,published,,,,,,,,,,') },
    expected: /organizations\.csv:7 \[id\]: organization SPR-001 is defined twice \(first at .*organizations\.csv:2\)/,
  },
  {
    label: 'a term whose parent does not exist',
    files: { 'taxonomy_terms.csv': `${TERMS}city_services,legal,Legal Aid,,law,\n` },
    expected: /taxonomy_terms\.csv:7 \[parent_code\]: taxonomy term city_services:legal names parent law, which does not exist/,
  },
  {
    label: 'a tag naming an unknown term',
    files: { 'organization_tags.csv': `${TAGS}SPR-001,city_services,legal\n` },
    expected: /organization_tags\.csv:7: tag city_services:legal names no known taxonomy term/,
  },
  {
    label: 'a tag naming an unknown organization',
    files: { 'organization_tags.csv': `${TAGS}SPR-404,city_services,food\n` },
    expected: /organization_tags\.csv:7 \[organization_id\]: names organization SPR-404, which is not in the input/,
  },
  {
    label: 'a parent cycle',
    files: { 'taxonomy_terms.csv': `${TERMS}city_services,egg,Egg,,chicken,\ncity_services,chicken,Chicken,,egg,\n` },
    expected: /taxonomy_terms\.csv:7 \[parent_code\]: taxonomy term city_services:egg is in a parent cycle/,
  },
  {
    label: 'an over-long field',
    files: { 'organizations.csv': appendOrganization(`SPR-009,${'N'.repeat(600)},published,,,,,,,,,,`) },
    expected: /organizations\.csv:7 \[name\]: is 600 characters long; the limit is 500/,
  },
  {
    label: 'a UUID id equal to the id derived for another organization',
    files: { 'organizations.csv': appendOrganization(`${organizationId('SPR-001')},Impostor,published,,,,,,,,,,`) },
    expected: /organizations\.csv:7 \[id\]: id [0-9a-f-]{36} is also the id this API derives for organization SPR-001/,
  },
  {
    label: 'a stray quote early in a long file (reported once, where the record starts)',
    files: {
      'organizations.csv': appendOrganization(
        `SPR-009,"Runaway,published,,,,,,,,,,\n${Array.from({ length: 30_000 }, (_, index) => `X-${index},Name ${index} with some padding text,published,,,,,,,,,,`).join('\n')}`,
      ),
    },
    expected: /organizations\.csv:7: malformed CSV: .*, in the record after line 6/,
    reportedOnce: true,
  },
  {
    label: 'a status that is neither published nor unpublished',
    files: { 'organizations.csv': appendOrganization('SPR-009,Maybe Org,draft,,,,,,,,,,') },
    expected: /organizations\.csv:7 \[status\]: must be one of published, unpublished, got "draft"/,
  },
];

describe('bad input: a located error, a non-zero exit, nothing published, the live dataset still served', () => {
  const data = temporaryDirectory();
  let liveSnapshot: string | undefined;
  before(async () => {
    assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
    liveSnapshot = currentSnapshotPath(data.path);
  });
  after(() => data.remove());

  for (const { label, files, expected, reportedOnce } of cases) {
    it(`refuses ${label}`, async () => {
      const sources = temporaryDirectory();
      try {
        const run = await runCommand('import', data.path, [nativeSourceDir(sources.path, files)]);
        assert.equal(run.code, 1, run.text);
        assert.match(run.text, expected);
        if (reportedOnce) assert.equal(run.output.filter((line) => line.startsWith('error: ')).length, 1, run.text);
        assert.match(run.text, /Nothing was published; the live dataset is unchanged\./);
        assert.equal(currentSnapshotPath(data.path), liveSnapshot);
      } finally {
        sources.remove();
      }
    });
  }

  it('still serves the live dataset afterwards', async () => {
    const { app } = await serveDataDir(data.path);
    try {
      assert.equal((await getJson(app, `${API}/organizations`)).body.total_items, 4);
    } finally {
      await app.close();
    }
  });

  it('takes over a lock left empty or by a dead import', async () => {
    const { writeFileSync: write } = await import('node:fs');
    for (const content of ['', '0', '-1', '999999999']) {
      write(join(data.path, 'import.lock'), content);
      const run = await runCommand('import', data.path, [NATIVE_EXAMPLE]);
      assert.equal(run.code, 0, `${JSON.stringify(content)}: ${run.text}`);
    }
  });

  it('refuses a source that does not exist', async () => {
    const run = await runCommand('import', data.path, [NATIVE_EXAMPLE, '/nonexistent/organizations.csv']);
    assert.equal(run.code, 1);
    assert.match(run.text, /\/nonexistent\/organizations\.csv: the file does not exist/);
    assert.equal(currentSnapshotPath(data.path), liveSnapshot);
  });

  it('collects many errors in one run, across files, and stops at the limit', async () => {
    const sources = temporaryDirectory();
    try {
      const files = {
        'organizations.csv': appendOrganization(`SPR-001,Again,published,,,,,,,,,,\nSPR-010,${'N'.repeat(501)},published,,,,,,,,,,\nSPR-011,X,gone,,,,,,,,,,`),
        'taxonomy_terms.csv': `${TERMS}city_services,dup,Dup,,,\ncity_services,dup,Dup again,,,\n`,
      };
      const all = await runCommand('validate', data.path, [nativeSourceDir(sources.path, files)]);
      assert.equal(all.code, 1);
      assert.equal(all.output.filter((line) => line.startsWith('error: ')).length, 4, all.text);
      assert.deepEqual(all.results, ['Not publishable: 4 errors, 0 warnings.']);
      const limited = await runCommand('validate', data.path, [sources.path], { maxErrors: 2 });
      assert.equal(limited.output.filter((line) => line.startsWith('error: ')).length, 2);
      assert.match(limited.text, /stopped at the limit of 2; there may be more/);
    } finally {
      sources.remove();
    }
  });

  it('gives one cause one message: a failed column is not followed by every reference into its rows', async () => {
    const sources = temporaryDirectory();
    try {
      const withoutName = ORGANIZATIONS.split('\n')
        .map((line) => line.split(',').filter((_, index) => index !== 1).join(','))
        .join('\n');
      const run = await runCommand('validate', data.path, [nativeSourceDir(sources.path, { 'organizations.csv': withoutName })]);
      assert.equal(run.code, 1);
      assert.deepEqual(run.output.filter((line) => line.startsWith('error: ')).map((line) => line.replace(/^error: .*organizations\.csv/, 'organizations.csv')), [
        'organizations.csv:1 [name]: missing required column "name"',
      ]);
      assert.match(run.text, /note: 7 more references to records not in the input, counted but not listed because errors came before them/);
      assert.doesNotMatch(run.text, /is linked to organization/);
    } finally {
      sources.remove();
    }
  });

  it('accepts a byte-order mark', async () => {
    const sources = temporaryDirectory();
    try {
      const run = await runCommand('validate', data.path, [nativeSourceDir(sources.path, { 'organizations.csv': `\uFEFF${ORGANIZATIONS}` })]);
      assert.equal(run.code, 0, run.text);
    } finally {
      sources.remove();
    }
  });

  it('drops an optional value that breaks its rule, with a warning naming it, and publishes the record; --strict refuses it', async () => {
    const target = temporaryDirectory();
    const sources = temporaryDirectory();
    try {
      const organizations = ORGANIZATIONS.replace('info@food.springfield.example', 'info at food bank')
        .replace('https://harborlight.example', 'harborlight dot example')
        .replace(',1984,', ',test31,')
        .replace(',SFB,', `,${'S'.repeat(600)},`)
        .replace(',987654321,', ',98765\x0b4321,');
      const folder = nativeSourceDir(sources.path, { 'organizations.csv': organizations });
      const run = await runCommand('import', target.path, [folder]);
      assert.equal(run.code, 0, run.text);
      const at = (line: number, field: string): string => `  ${join(folder, 'organizations.csv')}:${line} [${field}]: `;
      for (const [field, line, message] of [
        ['email', 2, '"info at food bank" is not an email address; dropped'],
        ['website', 5, '"harborlight dot example" is not an absolute http(s) URL; dropped'],
        ['year_incorporated', 2, '"test31" is not a four-digit year; dropped'],
        ['alternate_name', 2, `"${'S'.repeat(80)}…" is 600 characters long; the limit is 500; dropped`],
        ['tax_id', 5, '"98765\\x0b4321" holds a control character (shown escaped); dropped'],
      ] as const) {
        const summary = run.output.indexOf(`warning: 1 × invalid ${field} dropped, e.g.`);
        assert.ok(summary >= 0, `${field}:\n${run.text}`);
        assert.equal(run.output[summary + 1], `${at(line, field)}${message}`);
      }
      assert.match(run.text, /Published dataset \w+: 4 organizations/);
      const { app } = await serveDataDir(target.path);
      const bank = await getJson(app, `${API}/organizations/${organizationId('SPR-001')}`);
      assert.deepEqual([bank.body.email, bank.body.year_incorporated, bank.body.alternate_name], [undefined, undefined, undefined]);
      assert.deepEqual([bank.body.website, bank.body.tax_id, bank.body.legal_status], ['https://food.springfield.example', '123456789', 'Corporation']);
      const shelter = await getJson(app, `${API}/organizations/${organizationId('SPR-004')}`);
      assert.deepEqual([shelter.body.website, shelter.body.tax_id, shelter.body.name], [undefined, undefined, 'Harbor Light Shelter']);
      await app.close();

      const strict = await runCommand('validate', target.path, [folder], { strict: true });
      assert.equal(strict.code, 1, strict.text);
      assert.ok(strict.output.includes(`error: ${at(2, 'year_incorporated').trim()} "test31" is not a four-digit year; dropped (a warning, fatal with --strict)`), strict.text);
      assert.equal(strict.output.filter((line) => / dropped \(a warning, fatal with --strict\)$/.test(line)).length, 5, strict.text);
    } finally {
      target.remove();
      sources.remove();
    }
  });

  it('counts warnings such as an NTEE code not in the list; --strict makes them fatal', async () => {
    const sources = temporaryDirectory();
    try {
      const header = 'EIN,NAME,ICO,STREET,CITY,STATE,ZIP,SUBSECTION,ORGANIZATION,NTEE_CD,SORT_NAME';
      writeFileSync(join(sources.path, 'eo_test.csv'), `${header}\n990000001,KNOWN CODE CLUB,,,,,,03,1,K31,\n990000002,UNKNOWN CODE CLUB,,,,,,03,1,ZZZ9,\n`);
      const ntee = new URL('../../data/ntee/ntee_codes.csv', import.meta.url).pathname;
      const lenient = await runCommand('validate', data.path, [ntee, sources.path]);
      assert.equal(lenient.code, 0, lenient.text);
      assert.match(lenient.text, /warning: 1 × NTEE code not in the NTEE list, e\.g\.\n {2}.*eo_test\.csv:3 \[NTEE_CD\]: "ZZZ9" is not an NTEE code/);
      const strict = await runCommand('validate', data.path, [ntee, sources.path], { strict: true });
      assert.equal(strict.code, 1);
      assert.match(strict.text, /error: .*eo_test\.csv:3 \[NTEE_CD\]: "ZZZ9" is not an NTEE code; served without an NTEE tag \(a warning, fatal with --strict\)/);
    } finally {
      sources.remove();
    }
  });
});
