import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvField } from '../../src/http/csv.ts';
import { fixtureDataset, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, useTestApp } from '../helpers/app.ts';

/** RFC 4180 read back, written here from the RFC (not with the code under test): rows of fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let fields: string[] = [];
  let fieldText = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        fieldText += '"';
        index++;
      } else if (character === '"') quoted = false;
      else fieldText += character;
    } else if (character === '"') quoted = true;
    else if (character === ',') {
      fields.push(fieldText);
      fieldText = '';
    } else if (character === '\r' && text[index + 1] === '\n') {
      fields.push(fieldText);
      rows.push(fields);
      fields = [];
      fieldText = '';
      index++;
    } else fieldText += character;
  }
  assert.equal(fields.length + fieldText.length, 0, 'the last row ends with CRLF');
  return rows;
}

const records = (text: string): Record<string, string>[] => {
  const [header, ...rows] = parseCsv(text);
  for (const row of rows) assert.equal(row.length, header!.length);
  return rows.map((row) => Object.fromEntries(header!.map((name, index) => [name, row[index]!])));
};

describe('CSV fields', () => {
  it('quote what needs quotes, neutralise formulas, and leave the rest as it is', () => {
    assert.equal(csvField('Food Bank'), 'Food Bank');
    assert.equal(csvField('Smith, Jones & Co'), '"Smith, Jones & Co"');
    assert.equal(csvField('the "best"'), '"the ""best"""');
    assert.equal(csvField('two\r\nlines'), '"two\r\nlines"');
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) assert.equal(csvField(formula)[0] === '"' ? csvField(formula).slice(1, 2) : csvField(formula)[0], "'", formula);
    assert.equal(csvField('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"');
    assert.equal(csvField(1994), '1994');
    assert.equal(csvField(undefined), '');
  });
});

describe('lists as CSV', () => {
  const awkward = ['=cmd|" /C calc"!A0', 'Smith, Jones & "Partners"', 'Two\nLines', '-Minus', '@Mention', ' Spaced '];
  const test = useTestApp(
    fixtureDataset({
      organizations: [
        ...publishedOrganizations,
        ...awkward.map((name, index) => ({ externalId: `CSV-${index}`, status: 'published' as const, name, description: `${name} described`, identifiers: [], tags: [{ taxonomy: 'things', code: 'A' }] })),
      ],
    }),
  );

  it('hold every item of the filtered list, in list order, with the fields as served, read back exactly', async () => {
    const { app } = test();
    for (const query of ['', '?search=shelter', '?taxonomy_term_id=things:A&include_descendants=true']) {
      const csv = await app.inject(`${API}/organizations?format=csv${query.replace('?', '&')}`);
      assert.equal(csv.statusCode, 200);
      assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8; header=present');
      const ndjson = (await app.inject(`${API}/organizations?format=ndjson${query.replace('?', '&')}`)).body.trim().split('\n').map((line) => JSON.parse(line));
      const rows = records(csv.body);
      assert.deepEqual(rows.map((row) => row.id), ndjson.map((item) => item.id), query);
      for (const [index, row] of rows.entries()) {
        const item = ndjson[index]!;
        const expected = (value: unknown) => (value === undefined ? '' : /^[=+\-@\t\r]/.test(String(value)) ? `'${value}` : String(value));
        for (const name of ['name', 'description', 'tax_status', 'website', 'external_identifier', 'last_modified']) assert.equal(row[name], expected(item[name]), `${item.id} ${name}`);
        assert.equal(row.classifications, item.classifications.map((term: { taxonomy: string; code: string }) => `${term.taxonomy}:${term.code}`).join('; '));
      }
    }
    const names = records((await app.inject(`${API}/organizations?format=csv&taxonomy_term_id=things:A`)).body).map((row) => row.name);
    for (const name of awkward) assert.ok(names.includes(/^[=\-@]/.test(name) ? `'${name}` : name), name);
  });

  it('are offered for taxonomies and terms too, and declared in the OpenAPI document', async () => {
    const { app } = test();
    const taxonomies = records((await app.inject(`${API}/taxonomies?format=csv`)).body);
    assert.deepEqual(taxonomies.map((row) => row.code), ['Colors', 'things']);
    const terms = records((await app.inject(`${API}/taxonomy_terms?format=csv&taxonomy_id=things`)).body);
    assert.equal(terms.length, 23);
    assert.ok(terms.every((row) => row.taxonomy === 'things' && row.id !== ''));
    const document = JSON.parse((await app.inject(`${API}/openapi.json`)).body);
    for (const path of ['/organizations', '/taxonomies', '/taxonomy_terms']) {
      assert.ok(document.paths[path].get.responses['200'].content['text/csv'], path);
      const format = document.paths[path].get.parameters.find((parameter: { name: string }) => parameter.name === 'format');
      assert.deepEqual(format.schema.enum, ['json', 'ndjson', 'csv']);
    }
  });
});
