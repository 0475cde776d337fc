import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { API, getJson } from '../helpers/app.ts';
import { importAndServe } from '../helpers/imports.ts';

/**
 * The official HSDS example packages (vendor/, copied unchanged) import as they are, and every field
 * the profile serves comes back as the CSV gives it. The 3.0 example is read as upstream ships it,
 * with the HSDS datapackage.json its folder links to.
 */

const VENDOR = new URL('../../vendor/', import.meta.url).pathname;

type Row = Record<string, string>;

const rowsOf = (directory: string, file: string): Row[] =>
  parse(readFileSync(join(directory, file)), { columns: true, bom: true, skip_empty_lines: true }) as Row[];

/** The served value of a CSV field: numbers as numbers, empty as absent. */
const asServed = (column: string, value: string): unknown => (value === '' ? undefined : column === 'year_incorporated' ? Number(value) : value);

function assertFields(served: Record<string, unknown>, row: Row, columns: readonly string[], what: string): void {
  for (const column of columns) assert.deepEqual(served[column], asServed(column, row[column]!), `${what}: ${column}`);
}

const ORGANIZATION_COLUMNS = [
  'id',
  'name',
  'alternate_name',
  'description',
  'email',
  'website',
  'tax_status',
  'tax_id',
  'year_incorporated',
  'legal_status',
  'logo',
  'uri',
  'parent_organization_id',
] as const;
const IDENTIFIER_COLUMNS = ['id', 'organization_id', 'identifier_scheme', 'identifier_type', 'identifier'] as const;
const TAXONOMY_COLUMNS = ['id', 'name', 'description', 'uri', 'version'] as const;
const TERM_COLUMNS = ['id', 'code', 'name', 'description', 'parent_id', 'taxonomy', 'language', 'taxonomy_id', 'term_uri'] as const;

const EXAMPLES = [
  { version: '3.0', folder: join(VENDOR, 'hsds-3.0/examples/csv'), datapackage: join(VENDOR, 'hsds-3.0/datapackage.json') },
  { version: '3.2.3', folder: join(VENDOR, 'hsds-3.2.3/examples/csv'), datapackage: undefined },
];

for (const { version, folder, datapackage } of EXAMPLES) {
  describe(`the official HSDS ${version} example package`, () => {
    it('imports with exit 0, and serves every organization, identifier, taxonomy and term field as the CSV gives it', async () => {
      const files = Object.fromEntries(readdirSync(folder).map((name) => [name, readFileSync(join(folder, name))]));
      if (datapackage !== undefined) files['datapackage.json'] = readFileSync(datapackage);
      await importAndServe(files, async (app, run) => {
        // What it refers to outside itself is said, with what was done.
        assert.match(run.text, /\[taxonomy_id\]: names taxonomy 07ff6aee-a219-438c-b694-d2fcb6c5373b, which is not in taxonomies\.csv; the term is served with this taxonomy_id/);
        assert.match(run.text, /taxonomy_terms\.csv:2 \[parent_id\]: names term 0bc248fa-dc27-4650-9ba4-8f1a24ef16a2, which is not in the package; served as given/);
        assert.match(run.text, /\[parent_organization_id\]: parent cd09a387-91f4-4555-94ec-e799c35344cd is not in the input; served as given/);
        assert.match(run.text, /\[link_entity\]: is "link_entity", not "organization" or "service"/);
        assert.match(run.text, /not read \(this API serves organizations and taxonomies only\): metadata\.csv/);

        const [organization] = rowsOf(folder, 'organizations.csv');
        const served = await getJson(app, `${API}/organizations/${organization!.id}`);
        assert.equal(served.status, 200);
        assertFields(served.body, organization!, ORGANIZATION_COLUMNS, 'organization');
        // Its one attribute is linked to no entity this profile has (link_entity "link_entity"), so none is served.
        assert.deepEqual(served.body.attributes, []);
        const [identifier] = rowsOf(folder, 'organization_identifiers.csv');
        assert.equal(served.body.organization_identifiers.length, 1);
        assertFields(served.body.organization_identifiers[0], identifier!, IDENTIFIER_COLUMNS, 'organization_identifier');
        const list = await getJson(app, `${API}/organizations`);
        assertFields(list.body.contents[0], organization!, ORGANIZATION_COLUMNS, 'organization in the list');

        const [taxonomy] = rowsOf(folder, 'taxonomies.csv');
        const servedTaxonomy = await getJson(app, `${API}/taxonomies/${taxonomy!.id}`);
        assert.equal(servedTaxonomy.status, 200);
        assertFields(servedTaxonomy.body, taxonomy!, TAXONOMY_COLUMNS, 'taxonomy');

        const [term] = rowsOf(folder, 'taxonomy_terms.csv');
        const servedTerm = await getJson(app, `${API}/taxonomy_terms/${term!.id}`);
        assert.equal(servedTerm.status, 200);
        assertFields(servedTerm.body, term!, TERM_COLUMNS, 'taxonomy term');
        // Its taxonomy is not in the package: no taxonomy_detail, and no taxonomy of the dataset lists it.
        assert.equal(servedTerm.body.taxonomy_detail, undefined);
        const terms = await getJson(app, `${API}/taxonomy_terms`);
        assert.deepEqual(terms.body.contents.map((each: { id: string }) => each.id), [term!.id]);
        const ofTaxonomy = await getJson(app, `${API}/taxonomy_terms?taxonomy_id=${taxonomy!.id}`);
        assert.equal(ofTaxonomy.body.total_items, 0);
      });
    });
  });
}
