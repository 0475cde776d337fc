import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Diagnostics } from '../../src/publish/diagnostics.ts';
import { readRows } from '../../src/publish/rows.ts';
import { NATIVE_COLUMNS } from '../../src/publish/sources/native.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand } from '../helpers/imports.ts';
import type { ImportRun } from '../helpers/imports.ts';

/**
 * One cause, one message: a file saved with the wrong separator is refused
 * with that diagnosis first, not with the pile of errors it causes further on.
 */

const ORGANIZATIONS = readFileSync(join(NATIVE_EXAMPLE, 'organizations.csv'), 'utf8');

const errorsOf = (run: ImportRun): string[] => run.output.filter((line) => line.startsWith('error: '));

/** The errors and warnings reading one file gives, as `line: message` (or `[field]` when there is one). */
async function readOne(file: string, role: keyof typeof NATIVE_COLUMNS = 'organizations'): Promise<{ rows: number; errors: string[]; warnings: number }> {
  const diagnostics = new Diagnostics();
  let rows = 0;
  for await (const _ of readRows(file, NATIVE_COLUMNS[role], { diagnostics })) rows++;
  const errors = diagnostics.errors.map((error) => `${error.line ?? '-'}${error.field === undefined ? '' : ` [${error.field}]`}: ${error.message}`);
  return { rows, errors, warnings: diagnostics.warningCount };
}

describe('a file separated by semicolons, tabs or pipes', () => {
  const work = temporaryDirectory();
  after(() => work.remove());
  const write = (name: string, content: string | Buffer): string => {
    const file = join(work.path, name);
    writeFileSync(file, content);
    return file;
  };

  it('says the header looks semicolon-separated, and nothing else about that file', async () => {
    // As a spreadsheet set up for a comma as decimal mark saves "CSV": semicolons, and quotes where a value holds one.
    const semicolons = ORGANIZATIONS.replaceAll(',', ';');
    const { rows, errors, warnings } = await readOne(write('organizations.csv', semicolons));
    assert.equal(rows, 0);
    assert.deepEqual(errors, ['1: the header looks semicolon-separated ("id;name;status;alternate_name;description;email;website;tax_…"); save the file with commas as separators (CSV)']);
    assert.equal(warnings, 0, 'no "unknown column" warning for the whole header read as one column');
  });

  it('says so too when every field is quoted', async () => {
    const header = '"organization_id";"taxonomy";"term_code"';
    const { errors } = await readOne(write('organization_tags.csv', `${header}\r\n"SPR-001";"city_services";"food"\r\n`), 'organization_tags');
    assert.deepEqual(errors, [`1: the header looks semicolon-separated ("${header}"); save the file with commas as separators (CSV)`]);
  });

  it('says the header looks tab-separated (Excel\'s "Text (Tab delimited)")', async () => {
    const { errors } = await readOne(write('tabs.csv', 'id\tname\tstatus\nSPR-001\tSpringfield Food Bank\tpublished\n'));
    assert.deepEqual(errors, ['1: the header looks tab-separated ("id\\tname\\tstatus"); save the file with commas as separators (CSV)']);
  });

  it('says the header looks pipe-separated, for a header-only file too', async () => {
    const { errors } = await readOne(write('pipes.csv', 'id|name|status\n'));
    assert.deepEqual(errors, ['1: the header looks pipe-separated ("id|name|status"); save the file with commas as separators (CSV)']);
  });

  it('reports a missing column as before when the header has its commas, even with a semicolon in a column name', async () => {
    const { errors } = await readOne(write('typo.csv', 'id,name,state;region\nSPR-001,Springfield Food Bank,IL\n'));
    assert.deepEqual(errors, ['1 [status]: missing required column "status"']);
  });

  it('reads a comma-separated file whose values hold semicolons and tabs', async () => {
    const { rows, errors } = await readOne(write('fine.csv', 'id,name,status,description\nSPR-001,Food; Clothing,published,"a\tb|c"\n'));
    assert.deepEqual(errors, []);
    assert.equal(rows, 1);
  });

  it('is the first error of an import', async () => {
    const sources = temporaryDirectory();
    const data = temporaryDirectory();
    try {
      nativeSourceDir(sources.path, { 'organizations.csv': ORGANIZATIONS.replaceAll(',', ';') });
      const run = await runCommand('validate', data.path, [sources.path]);
      assert.equal(run.code, 1, run.text);
      assert.match(errorsOf(run)[0]!, /^error: .*organizations\.csv:1: the header looks semicolon-separated \("id;name;status;/);
      assert.equal(errorsOf(run).filter((line) => line.includes('organizations.csv')).length, 1, run.text);
      assert.doesNotMatch(run.text, /unknown column|missing required column|malformed CSV/);
    } finally {
      sources.remove();
      data.remove();
    }
  });
});
