import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { allItems, temporaryDirectory } from '../helpers/app.ts';
import { checkEveryResponse } from '../helpers/hsds-schemas.ts';
import { runCommand, serveDataDir } from '../helpers/imports.ts';
import { assertRoundTrip } from '../helpers/round-trip.ts';
import type { ImportRun } from '../helpers/imports.ts';

/**
 * Imports Open211 Miami, a real HSDS 1.x package from a 211 (2019), as it is, and checks what is
 * served against its files. The package is not in this repository (its licence is unclear, and its
 * taxonomy is the proprietary AIRS/211 LA taxonomy; see README.md here): give its folder in
 * OPEN211_MIAMI. Run with `npm run check:open211-miami`.
 */

const folder = process.env.OPEN211_MIAMI;
if (folder === undefined || folder === '') throw new Error('set OPEN211_MIAMI to the folder of the Open211 Miami package (see test/external/README.md)');

type Row = Record<string, string>;
const rowsOf = (file: string): Row[] => parse(readFileSync(join(folder, file)), { columns: true, bom: true, skip_empty_lines: true }) as Row[];

/** What the import makes of a 1.x `url`: as given with a scheme, with http:// when it is a host name, else nothing. */
function expectedWebsite(url: string): string | undefined {
  const value = url.trim();
  if (value === '') return undefined;
  if (/^https?:\/\//i.test(value)) return value;
  return /^([a-z0-9-]+\.)+[a-z]{2,}(\/\S*)?$/i.test(value) ? `http://${value}` : undefined;
}


describe('Open211 Miami (HSDS 1.x) imported as it is', () => {
  const data = temporaryDirectory();
  let run: ImportRun;
  let app: FastifyInstance;
  let invalid: string[];
  before(async () => {
    run = await runCommand('import', data.path, [folder]);
    ({ app } = await serveDataDir(data.path));
    invalid = checkEveryResponse(app);
  });
  after(async () => {
    await app?.close();
    data.remove();
  });

  it('publishes, and the summary says what was read, fixed and left out', () => {
    assert.equal(run.code, 0, run.text);
    console.log(run.text);
    assert.match(run.text, /read as HSDS 1\.x: organizations\.csv, taxonomy\.csv, services\.csv, services_taxonomy\.csv/);
    assert.match(run.text, /Published dataset \w+: 1,074 organizations \(0 unpublished left out\), 1 taxonomy, 1,991 taxonomy terms/);
    assert.match(run.text, /warning: 3 × term defined twice \(the first is kept\)/);
  });

  it('serves every website that is a web address, with a scheme', async () => {
    const organizations = rowsOf('organizations.csv');
    const served = new Map((await allItems(app, '/organizations')).map((organization) => [organization.external_identifier, organization]));
    assert.equal(served.size, organizations.length);
    let websites = 0;
    for (const row of organizations) {
      const expected = expectedWebsite(row.url!);
      assert.equal(served.get(row.id!).website, expected, `organization ${row.id}: ${row.url}`);
      if (expected !== undefined) websites++;
    }
    assert.equal(websites, 982, 'of 983 urls, all but "releasethesilence"');
  });

  it('serves all distinct terms (1,994 rows, 3 ids repeated) with their parents, in one taxonomy named by the vocabulary', async () => {
    const rows = rowsOf('taxonomy.csv');
    const first = new Map<string, Row>();
    for (const row of rows) if (!first.has(row.id!)) first.set(row.id!, row);
    assert.equal(rows.length, 1994);
    const [taxonomy] = await allItems(app, '/taxonomies');
    assert.equal(taxonomy.name, 'Open211 Miami - AIRS');
    const terms = await allItems(app, `/taxonomy_terms?taxonomy_id=${taxonomy.id}`);
    assert.equal(terms.length, first.size);
    const idByCode = new Map(terms.map((term) => [term.code, term.id]));
    for (const term of terms) {
      const row = first.get(term.code)!;
      assert.equal(term.name, row.name, term.code);
      assert.equal(term.parent_id, row.parent_id === '' ? undefined : idByCode.get(row.parent_id!), `parent of ${term.code}`);
      assert.equal(term.taxonomy, 'Open211 Miami - AIRS');
    }
    const children = (code: string) => rows.filter((row) => first.get(row.id!) === row && row.parent_id === code).length;
    for (const code of ['B', 'P', 'Y']) assert.equal(terms.find((term) => term.code === code).children_count, children(code), `children of ${code}`);
  });

  it("gives each organization the tags of its services, once each", async () => {
    const organizationOf = new Map(rowsOf('services.csv').map((service) => [service.id!, service.organization_id!]));
    const expected = new Map<string, Set<string>>();
    for (const tag of rowsOf('services_taxonomy.csv')) {
      const organization = organizationOf.get(tag.service_id!);
      if (organization === undefined) continue;
      if (!expected.has(organization)) expected.set(organization, new Set());
      expected.get(organization)!.add(tag.taxonomy_id!);
    }
    let tagged = 0;
    for (const organization of await allItems(app, '/organizations?full=true')) {
      const codes = organization.classifications.map((classification: { code: string }) => classification.code).sort();
      assert.deepEqual(codes, [...(expected.get(organization.external_identifier) ?? [])].sort(), organization.external_identifier);
      assert.equal(organization.attributes.length, codes.length);
      if (codes.length > 0) tagged++;
    }
    assert.equal(tagged, 1057);
  });

  it('serves only valid HSDS 3.0 and 3.2.3', () => {
    assert.deepEqual(invalid, []);
  });
});

describe('Open211 Miami through its HSDS tabular package (docs/exchange.md)', () => {
  it('exports a package that validates against its own datapackage.json, and that imports to the same bytes at every endpoint', async () => {
    await assertRoundTrip([folder]);
  });
});
