import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, it } from 'node:test';
import { readCsv } from '../../src/sources/files/csv.ts';
import { EVENTS_PER_BATCH } from '../../src/sources/files/csv-thread.ts';
import type { Columns } from '../../src/sources/files/csv.ts';
import { Diagnostics } from '../../src/sources/files/diagnostics.ts';
import { temporaryDirectory } from '../helpers/app.ts';

const REPOSITORY = join(import.meta.dirname, '..', '..');
const TAG_COLUMNS: Columns = { required: ['organization_id', 'taxonomy', 'term_code'], optional: ['note'] };

/** Rows, errors and warnings of reading `file`, on this thread or on the parsing worker. */
async function readAll(file: string, columns: Columns, parseInWorker: boolean, stopAfter = Infinity) {
  const diagnostics = new Diagnostics({ maxErrors: 10_000 });
  const rows: unknown[] = [];
  let bytes = 0;
  for await (const row of readCsv(file, columns, diagnostics, { parseInWorker, onBytes: (count) => (bytes += count) })) {
    rows.push(row);
    if (rows.length >= stopAfter) break;
  }
  return {
    rows,
    errors: diagnostics.errors.map(({ line, message }) => `${line ?? '-'}: ${message}`),
    warnings: diagnostics.warnings.map(({ kind, count, examples }) => ({ kind, count, examples })),
    bytes,
  };
}

describe('CSV parsing: the same rows and problems on this thread and on the worker thread', () => {
  const directory = temporaryDirectory();
  after(() => directory.remove());
  const write = (name: string, content: string | Buffer): string => {
    const file = join(directory.path, name);
    writeFileSync(file, content);
    return file;
  };
  const runaway = `organization_id,taxonomy,term_code\na,"b,c\n${Array.from({ length: 3 * EVENTS_PER_BATCH }, (_, index) => `x-${index},t,c`).join('\n')}\n`;
  const cases: { label: string; file: () => string; columns?: Columns; expected: (read: Awaited<ReturnType<typeof readAll>>) => void }[] = [
    {
      label: 'a row with too few fields is skipped, with its line; the rows after it are read',
      file: () => write('short.csv', 'organization_id,taxonomy,term_code\na,b\nd,e,f\n'),
      expected: ({ rows, errors }) => {
        assert.deepEqual(errors, ['2: malformed CSV: 2 fields where the header has 3']);
        assert.deepEqual(rows, [{ fields: { organization_id: 'd', taxonomy: 'e', term_code: 'f' }, line: 3 }]);
      },
    },
    {
      label: 'quoted fields and semicolons: one message, that the file is not comma-separated',
      file: () => write('semicolons.csv', '"organization_id";"taxonomy";"term_code"\n"a";"b";"c"\n'),
      expected: ({ rows, errors }) => {
        assert.deepEqual(errors, ['1: the header looks semicolon-separated (""organization_id";"taxonomy";"term_code""); save the file with commas as separators (CSV)']);
        assert.deepEqual(rows, []);
      },
    },
    {
      label: 'a runaway quote ends the file, reported once where its record starts',
      file: () => write('runaway.csv', runaway),
      expected: ({ rows, errors }) => {
        assert.deepEqual(rows, []);
        assert.equal(errors.length, 1);
        assert.match(errors[0]!, /^2: malformed CSV: a quoted field is never closed \(unterminated quote\), in the record after line 1$/);
      },
    },
    {
      label: 'a byte-order mark, empty lines, an unused column: rows keep their lines and only the declared columns',
      file: () => write('bom.csv', '\uFEFForganization_id,taxonomy,term_code,extra\n\n a ,b,c,z\n\n'),
      expected: ({ rows, errors, warnings }) => {
        assert.deepEqual(errors, []);
        assert.deepEqual(rows, [{ fields: { organization_id: ' a ', taxonomy: 'b', term_code: 'c' }, line: 3 }]);
        assert.deepEqual(
          warnings.map(({ kind }) => kind),
          ['unknown column'],
        );
      },
    },
    {
      label: 'an empty file',
      file: () => write('empty.csv', ''),
      expected: ({ errors }) => assert.deepEqual(errors, ['-: the file is empty (expected a header row)']),
    },
    {
      label: 'a file that does not exist',
      file: () => join(directory.path, 'missing.csv'),
      expected: ({ errors }) => assert.deepEqual(errors, ['-: the file does not exist']),
    },
    {
      label: 'bytes that are not UTF-8, in a gzipped file',
      file: () => write('latin1.csv.gz', gzipSync(Buffer.concat([Buffer.from('organization_id,taxonomy,term_code\nCaf'), Buffer.from([0xe9]), Buffer.from(',b,c\n')]))),
      expected: ({ rows, errors }) => {
        assert.deepEqual(rows, []);
        assert.deepEqual(errors, ['2: the file is not UTF-8: byte 0xE9 after "Caf" looks like Latin-1/Windows-1252 ("Café"); save it as UTF-8']);
      },
    },
    {
      label: 'an IRS state file as published (gzipped, 28 columns of which 6 are read)',
      file: () => join(REPOSITORY, 'data', 'irs-eo-bmf', 'eo_ak.csv.gz'),
      columns: { required: ['EIN', 'NAME', 'SUBSECTION', 'ORGANIZATION', 'NTEE_CD', 'SORT_NAME'] },
      expected: ({ rows, errors, bytes }) => {
        assert.deepEqual(errors, []);
        assert.ok(rows.length > 2_000);
        assert.deepEqual(Object.keys((rows[0] as { fields: object }).fields), ['EIN', 'NAME', 'SUBSECTION', 'ORGANIZATION', 'NTEE_CD', 'SORT_NAME']);
        assert.equal(bytes, statSync(join(REPOSITORY, 'data', 'irs-eo-bmf', 'eo_ak.csv.gz')).size);
      },
    },
    {
      label: 'the NTEE code list as published (quoted fields holding commas)',
      file: () => join(REPOSITORY, 'data', 'ntee', 'ntee_codes.csv'),
      columns: { required: ['code', 'title', 'definition', 'parent_code'] },
      expected: ({ rows, errors }) => {
        assert.deepEqual(errors, []);
        assert.ok(rows.length > 600);
        assert.ok(rows.some((row) => (row as { fields: { definition: string } }).fields.definition.includes(', ')));
      },
    },
  ];
  for (const { label, file, columns, expected } of cases) {
    it(label, async () => {
      const path = file();
      const here = await readAll(path, columns ?? TAG_COLUMNS, false);
      expected(here);
      assert.deepEqual(await readAll(path, columns ?? TAG_COLUMNS, true), here);
    });
  }

  it('a reader that stops early stops the worker\'s parse of that file, and the next file reads whole', async () => {
    const many = write('many.csv', `organization_id,taxonomy,term_code\n${Array.from({ length: 20 * EVENTS_PER_BATCH }, (_, index) => `x-${index},t,c`).join('\n')}\n`);
    const first = await readAll(many, TAG_COLUMNS, true, 3);
    assert.equal(first.rows.length, 3);
    const whole = await readAll(many, TAG_COLUMNS, true);
    assert.equal(whole.rows.length, 20 * EVENTS_PER_BATCH);
    assert.deepEqual(whole.rows.at(-1), { fields: { organization_id: `x-${20 * EVENTS_PER_BATCH - 1}`, taxonomy: 't', term_code: 'c' }, line: 20 * EVENTS_PER_BATCH + 1 });
  });
});
