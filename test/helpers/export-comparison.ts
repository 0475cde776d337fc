import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { allItems, temporaryDirectory } from './app.ts';
import { checkEveryResponse } from './hsds-schemas.ts';
import { runCommand, serveDataDir } from './imports.ts';
import type { ImportRun } from './imports.ts';

/**
 * Compares what the API serves with an HSDS package's own files, read here with csv-parse and the
 * rules of docs/data-format.md written out again (not with the import's reader), so that a real export
 * shows field by field what was served, and what was dropped and why.
 */

type Row = Record<string, string | undefined>;

/** A value the rules leave out, with the organization it was on. */
export interface Dropped {
  id: string;
  field: string;
  value: string;
}

export interface ExportComparison {
  organizations: number;
  /** Websites written as a host name, served with http:// in front. */
  websitesGivenHttp: number;
  dropped: Dropped[];
  terms: number;
}

/** The longest value served per field, as docs/data-format.md gives them. */
const LIMITS: Record<string, number> = { alternate_name: 500, description: 20_000, email: 254, website: 2048, url: 2048, logo: 2048, uri: 2048, tax_id: 200 };
const OTHER_TEXT_LIMIT = 200;

const ABSOLUTE_HTTP_URL = /^https?:\/\/[^\s/?#]+\S*$/i;
const HOST_NAME = /^([a-z0-9-]+\.)+[a-z]{2,}(:\d+)?([/?#]\S*)?$/i;
const EMAIL = /^[^\s@]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/i;
const YEAR = /^\d{4}$/;

function rowsOf(folder: string, file: string): Row[] {
  const path = join(folder, file);
  return existsSync(path) ? (parse(readFileSync(path), { columns: true, bom: true, skip_empty_lines: true }) as Row[]) : [];
}

const text = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim().normalize('NFC');
  return trimmed === '' ? undefined : trimmed;
};

/** What an organization row should be served as, each optional field by its rule, and what it drops. */
function expectedOrganization(row: Row, dropped: Dropped[]): { served: Record<string, unknown>; givenHttp: boolean } {
  const id = text(row.id)!;
  // HSDS requires a description: an organization without one is served with an empty one.
  const served: Record<string, unknown> = { external_identifier: id, name: text(row.name), description: '' };
  let givenHttp = false;
  const keep = (field: string, column: string, value: unknown, valid: boolean): void => {
    if (valid) served[field] = value;
    else dropped.push({ id, field: column, value: text(row[column])! });
  };
  for (const field of ['alternate_name', 'description', 'tax_status', 'tax_id', 'legal_status']) {
    const value = text(row[field]);
    if (value !== undefined) keep(field, field, value, value.length <= (LIMITS[field] ?? OTHER_TEXT_LIMIT));
  }
  const email = text(row.email);
  if (email !== undefined) keep('email', 'email', email, email.length <= LIMITS.email! && EMAIL.test(email));
  const websiteColumn = 'website' in row || !('url' in row) ? 'website' : 'url';
  const website = text(row[websiteColumn]);
  if (website !== undefined && website.length <= LIMITS.website!) {
    givenHttp = !ABSOLUTE_HTTP_URL.test(website) && HOST_NAME.test(website);
    keep('website', websiteColumn, givenHttp ? `http://${website}` : website, givenHttp || ABSOLUTE_HTTP_URL.test(website));
  } else if (website !== undefined) {
    keep('website', websiteColumn, website, false);
  }
  for (const field of ['logo', 'uri']) {
    const value = text(row[field]);
    if (value !== undefined) keep(field, field, value, value.length <= LIMITS[field]! && ABSOLUTE_HTTP_URL.test(value));
  }
  const year = text(row.year_incorporated);
  if (year !== undefined) keep('year_incorporated', 'year_incorporated', Number(year), YEAR.test(year));
  return { served, givenHttp };
}

const SERVED_FIELDS = ['external_identifier', 'name', 'alternate_name', 'description', 'email', 'website', 'tax_status', 'tax_id', 'year_incorporated', 'legal_status', 'logo', 'uri'];

/**
 * Checks every organization served against its row of `organizations.csv` (every row is served, and
 * each field as its rule says), and every term against `taxonomy_terms.csv` or a 1.x `taxonomy.csv`.
 */
export async function compareWithInput(folder: string, app: FastifyInstance): Promise<ExportComparison> {
  const rows = rowsOf(folder, 'organizations.csv');
  const served = new Map((await allItems(app, '/organizations?full=true')).map((organization) => [organization.external_identifier, organization]));
  assert.equal(served.size, new Set(rows.map((row) => text(row.id))).size, 'every organization of the input is served');
  const dropped: Dropped[] = [];
  let websitesGivenHttp = 0;
  for (const row of rows) {
    const expected = expectedOrganization(row, dropped);
    if (expected.givenHttp) websitesGivenHttp++;
    const organization = served.get(expected.served.external_identifier);
    const actual = Object.fromEntries(SERVED_FIELDS.filter((field) => organization?.[field] !== undefined).map((field) => [field, organization[field]]));
    assert.deepEqual(actual, expected.served, `organization ${row.id}`);
  }

  // 3.x terms have `name` (and maybe `code`), 2.0 terms `term`, 1.x `taxonomy.csv` terms `name` and `vocabulary`.
  const version1 = rowsOf(folder, 'taxonomy.csv').filter((row) => 'vocabulary' in row || 'parent_name' in row);
  const termRows = [...rowsOf(folder, 'taxonomy_terms.csv'), ...version1];
  const expectedTerms = new Map<string, string | undefined>();
  for (const row of termRows) {
    const code = text(row.code) ?? text(row.id)!;
    if (!expectedTerms.has(code)) expectedTerms.set(code, text(row.name ?? row.term));
  }
  const terms = await allItems(app, '/taxonomy_terms');
  assert.deepEqual(new Map(terms.map((term) => [term.code, term.name])), expectedTerms, 'every term of the input is served, by code, with its name');
  return { organizations: rows.length, websitesGivenHttp, dropped, terms: terms.length };
}

/** The count of each kind of warning in an import's summary (`warning: 4 × invalid year_incorporated dropped, e.g.`). */
export function warningCounts(run: ImportRun): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of run.output) {
    const summary = /^warning: ([\d,]+) × (.+), e\.g\.$/.exec(line);
    if (summary !== null) counts[summary[2]!] = Number(summary[1]!.replaceAll(',', ''));
  }
  return counts;
}

/** The dropped values by field, as warning kinds name them: `invalid <field> dropped`. */
export function droppedByKind(dropped: readonly Dropped[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { field } of dropped) counts[`invalid ${field} dropped`] = (counts[`invalid ${field} dropped`] ?? 0) + 1;
  return counts;
}

/** What an export must give: its import's summary, and what is served of it. */
export interface ExportExpected {
  /** The summary's line, after "Published dataset <version>: ". */
  published: string;
  warnings: Record<string, number>;
  organizations: number;
  terms: number;
  websitesGivenHttp: number;
  /** Dropped values, as `field: value`, in file order. */
  dropped: string[];
}

/** The tests of one export folder imported as it is: the import's summary, every field served against the input, and valid HSDS. */
export function describeExport(title: string, folder: string, expected: ExportExpected): void {
  describe(`${title}, imported as it is`, () => {
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
      assert.equal(run.code, 0, run.text);
      assert.match(run.results.join('\n'), new RegExp(`^Published dataset [0-9a-f]{16}: ${expected.published.replace(/[()]/g, '\\$&')};`));
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

    it('serves only valid HSDS 3.0 and 3.2.3, and nothing its profile does not declare', () => {
      assert.deepEqual(invalid, []);
    });
  });
}
