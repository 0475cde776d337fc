import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, it } from 'node:test';
import { Diagnostics } from '../../src/sources/files/diagnostics.ts';
import { readRows } from '../../src/sources/files/rows.ts';
import { resolveSources } from '../../src/sources/resolve.ts';
import { NATIVE_COLUMNS, nativeRoleOf } from '../../src/sources/native.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand } from '../helpers/imports.ts';
import type { ImportRun } from '../helpers/imports.ts';

/**
 * One cause, one message: a file saved with the wrong separator or in the wrong encoding is refused
 * with that diagnosis first, not with the pile of errors it causes further on.
 */

const ORGANIZATIONS = readFileSync(join(NATIVE_EXAMPLE, 'organizations.csv'), 'utf8');

/** What a French-speaking food bank might export: accents on line 3, a Windows apostrophe on line 4. */
const ACCENTED = [
  'id,name,status,alternate_name,description',
  'QC-001,Banque alimentaire de Laval,published,,Collecte et partage de denrées.',
  'QC-002,Le Café de la Rue,published,,Repas chauds le midi.',
  "QC-003,St. Mary’s Pantry,published,,Open Tuesdays.",
  '',
].join('\r\n');

const errorsOf = (run: ImportRun): string[] => run.output.filter((line) => line.startsWith('error: '));

/** The errors and warnings reading one file gives, as `line: message` (or `[field]` when there is one). */
async function readOne(file: string, role: keyof typeof NATIVE_COLUMNS = 'organizations'): Promise<{ rows: number; errors: string[]; warnings: number }> {
  const diagnostics = new Diagnostics();
  let rows = 0;
  for await (const _ of readRows(file, NATIVE_COLUMNS[role], { diagnostics })) rows++;
  const errors = diagnostics.errors.map((error) => `${error.line ?? '-'}${error.field === undefined ? '' : ` [${error.field}]`}: ${error.message}`);
  return { rows, errors, warnings: diagnostics.warningCount };
}

/** Writes files into a folder of the enclosing suite, removed after it; returns each file's path. */
function scratchFiles(): (name: string, content: string | Buffer) => string {
  const work = temporaryDirectory();
  after(() => work.remove());
  return (name, content) => {
    const file = join(work.path, name);
    writeFileSync(file, content);
    return file;
  };
}

describe('a file separated by semicolons, tabs or pipes', () => {
  const write = scratchFiles();

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

describe('a file that is not UTF-8', () => {
  const write = scratchFiles();

  it('says a Latin-1 byte looks like Latin-1, quoting the word, with its line', async () => {
    const { errors } = await readOne(write('latin1.csv', Buffer.from(ACCENTED, 'latin1')));
    // Line 2's "denrées" is Latin-1 too, and comes first.
    assert.deepEqual(errors, ['2: the file is not UTF-8: byte 0xE9 after "denr" looks like Latin-1/Windows-1252 ("denrées."); save it as UTF-8']);
    const fromLine3 = ACCENTED.replace('denrées', 'denrees');
    assert.deepEqual((await readOne(write('latin1-3.csv', Buffer.from(fromLine3, 'latin1')))).errors, [
      '3: the file is not UTF-8: byte 0xE9 after "Caf" looks like Latin-1/Windows-1252 ("Café"); save it as UTF-8',
    ]);
  });

  it('says a Windows-1252 apostrophe looks like Windows-1252', async () => {
    const windows = Buffer.from(ACCENTED.replace('denrées', 'denrees').replace('Café', 'Cafe').replace('’', '\x92'), 'latin1');
    assert.deepEqual((await readOne(write('cp1252.csv', windows))).errors, [
      '4: the file is not UTF-8: byte 0x92 after "Mary" looks like Latin-1/Windows-1252 ("Mary’s"); save it as UTF-8',
    ]);
  });

  it('quotes what comes before a bad byte at the start of a field, or of the last line', async () => {
    const school = 'id,name,status\nSPR-009,École Saint-Jean,published';
    assert.deepEqual((await readOne(write('ecole.csv', Buffer.from(school, 'latin1')))).errors, [
      '2: the file is not UTF-8: byte 0xC9 after "SPR-009," looks like Latin-1/Windows-1252 ("École"); save it as UTF-8',
    ]);
    // The last byte of the file, with no line break after it.
    assert.deepEqual((await readOne(write('last.csv', Buffer.from('id,name,status\nSPR-009,Published,Caf\xe9', 'latin1')))).errors, [
      '2: the file is not UTF-8: byte 0xE9 after "Caf" looks like Latin-1/Windows-1252 ("Café"); save it as UTF-8',
    ]);
  });

  it('quotes the word across a read boundary, in a long (or gzipped) file, with its line', async () => {
    // "Caf" ends the first 256 KiB read from disk; its "é" starts the next read.
    const lines = ['id,name,status'];
    for (let index = 0, length = 0; length < 250_000; index++) {
      lines.push(`F-${index},Filler organization number ${index},published`);
      length += lines.at(-1)!.length + 1;
    }
    const head = `${lines.join('\n')}\nQC-002,`;
    const text = `${head}${'x'.repeat(256 * 1024 - head.length - ' Le Caf'.length)} Le Café,published\n`;
    assert.equal(Buffer.from(text, 'latin1').indexOf(0xe9), 256 * 1024);
    const expected = `${lines.length + 1}: the file is not UTF-8: byte 0xE9 after "Caf" looks like Latin-1/Windows-1252 ("Café"); save it as UTF-8`;
    assert.deepEqual((await readOne(write('long.csv', Buffer.from(text, 'latin1')))).errors, [expected]);
    assert.deepEqual((await readOne(write('long.csv.gz', gzipSync(Buffer.from(text, 'latin1'))))).errors, [expected]);
  });

  it('says a byte that is no character in Latin-1/Windows-1252 either is just not UTF-8', async () => {
    const bytes = Buffer.concat([Buffer.from('id,name,status\nSPR-009,Odd'), Buffer.from([0x81]), Buffer.from(',published\n')]);
    assert.deepEqual((await readOne(write('odd.csv', bytes))).errors, [
      '2: the file is not valid UTF-8: byte 0x81 after "Odd" is not a character in UTF-8 or Latin-1/Windows-1252; save it as UTF-8',
    ]);
  });

  it('says a file with a UTF-16 byte-order mark is UTF-16 (little- or big-endian, CSV or NDJSON)', async () => {
    const message = '1: the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8';
    const utf16le = Buffer.from(`\uFEFF${ORGANIZATIONS}`, 'utf16le');
    assert.deepEqual((await readOne(write('utf16le.csv', utf16le))).errors, [message]);
    assert.deepEqual((await readOne(write('utf16be.csv', Buffer.from(utf16le).swap16()))).errors, [message]);
    assert.deepEqual((await readOne(write('utf16le.ndjson', Buffer.from('\uFEFF{"id":"SPR-001","name":"Springfield Food Bank","status":"published"}\n', 'utf16le')))).errors, [
      message,
    ]);
    // Only a header: still a UTF-16 file, not an empty one.
    assert.deepEqual((await readOne(write('utf16-header.csv', Buffer.from('\uFEFFid,name,status\r\n', 'utf16le')))).errors, [message]);
  });

  it('says a file with a zero in every other byte looks UTF-16, though zero bytes are valid UTF-8', async () => {
    const message = '1: the file looks UTF-16 (every other byte is zero); save it as UTF-8';
    assert.deepEqual((await readOne(write('utf16-no-bom.csv', Buffer.from(ORGANIZATIONS, 'utf16le')))).errors, [message]);
    assert.deepEqual((await readOne(write('utf16be-no-bom.csv', Buffer.from(ORGANIZATIONS, 'utf16le').swap16()))).errors, [message]);
  });

  it('still reads UTF-8, with or without a byte-order mark, and says an empty file is empty', async () => {
    const utf8 = ACCENTED.replace('’', "'");
    assert.deepEqual(await readOne(write('utf8.csv', utf8)), { rows: 3, errors: [], warnings: 0 });
    assert.deepEqual(await readOne(write('utf8-bom.csv', `\uFEFF${utf8}`)), { rows: 3, errors: [], warnings: 0 });
    assert.deepEqual(await readOne(write('header-only.csv', 'id,name,status\n')), { rows: 0, errors: [], warnings: 0 });
    assert.deepEqual((await readOne(write('empty.csv', ''))).errors, ['-: the file is empty (expected a header row)']);
    assert.deepEqual((await readOne(write('empty.ndjson', ''))).errors, ['-: the file is empty']);
  });

  it('is the first error of an import', async () => {
    const sources = temporaryDirectory();
    const data = temporaryDirectory();
    try {
      nativeSourceDir(sources.path, { 'organizations.csv': Buffer.from(ORGANIZATIONS.replace('Westside Pantry', 'Westside Café'), 'latin1') });
      const run = await runCommand('validate', data.path, [sources.path]);
      assert.equal(run.code, 1, run.text);
      assert.match(errorsOf(run)[0]!, /^error: .*organizations\.csv:3: the file is not UTF-8: byte 0xE9 after "Caf" looks like Latin-1\/Windows-1252 \("Café"\); save it as UTF-8$/);
    } finally {
      sources.remove();
      data.remove();
    }
  });
});

describe('file names, matched ignoring case', () => {
  const work = temporaryDirectory();
  after(() => work.remove());
  const NDJSON_EXAMPLE = join(import.meta.dirname, '..', 'fixtures', 'native-ndjson');

  /** A folder holding the native example under the given names (example name → name written). */
  function folder(name: string, names: Record<string, string>, from = NATIVE_EXAMPLE): string {
    const directory = join(work.path, name);
    mkdirSync(directory);
    for (const [example, written] of Object.entries(names)) copyFileSync(join(from, example), join(directory, written));
    return directory;
  }

  it('knows a native file by its name in any case, and only by the names of its roles', () => {
    assert.equal(nativeRoleOf('export/Organizations.csv'), 'organizations');
    assert.equal(nativeRoleOf('export/ORGANIZATIONS.CSV.GZ'), 'organizations');
    assert.equal(nativeRoleOf('export/Taxonomy_Terms.NDJSON'), 'taxonomy_terms');
    assert.equal(nativeRoleOf('export/organisations.csv'), undefined);
    assert.equal(nativeRoleOf('export/constructor.csv'), undefined, 'not a property every object has');
  });

  it('reads Organizations.NDJSON, TAXONOMIES.NDJSON, Taxonomy_Terms.NDJSON... as what they are', async () => {
    const directory = folder('capitals', {
      'organizations.ndjson': 'Organizations.NDJSON',
      'taxonomies.ndjson': 'TAXONOMIES.NDJSON',
      'taxonomy_terms.ndjson': 'Taxonomy_Terms.NDJSON',
      'organization_tags.ndjson': 'Organization_Tags.Ndjson',
      'organization_identifiers.ndjson': 'ORGANIZATION_IDENTIFIERS.ndjson',
    }, NDJSON_EXAMPLE);
    const data = temporaryDirectory();
    try {
      const run = await runCommand('validate', data.path, [directory]);
      assert.equal(run.code, 0, run.text);
      assert.match(run.results.join('\n'), /^Publishable: 4 organizations \(1 unpublished left out\), 1 taxonomy, 5 taxonomy terms; 0 warnings/);
      // Named one by one, and with the kind given for the folder.
      const files = readdirSync(directory).map((name) => join(directory, name));
      assert.match((await runCommand('validate', data.path, files)).text, /Publishable: 4 organizations/);
      assert.match((await runCommand('validate', data.path, [`native:${directory}`])).text, /Publishable: 4 organizations/);
    } finally {
      data.remove();
    }
  });

  it('refuses two files whose names differ only in case, reading one so that nothing else fails', async () => {
    const directory = folder('twins', {
      'organizations.csv': 'organizations.csv',
      'taxonomies.csv': 'taxonomies.csv',
      'taxonomy_terms.csv': 'taxonomy_terms.csv',
      'organization_tags.csv': 'organization_tags.csv',
    });
    copyFileSync(join(directory, 'organizations.csv'), join(directory, 'Organizations.csv'));
    const data = temporaryDirectory();
    try {
      for (const source of [directory, `native:${directory}`]) {
        const run = await runCommand('validate', data.path, [source]);
        assert.equal(run.code, 1, run.text);
        assert.deepEqual(errorsOf(run), [
          `error: ${join(directory, 'organizations.csv')}: has the same name as Organizations.csv beside it but for case; names are read ignoring case, so keep one of the two (this one is not read)`,
        ]);
      }
    } finally {
      data.remove();
    }
  });
});

describe('a file in a source folder that is not read', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  it('is named in a warning saying why, with the name meant when it looks like a slip', async () => {
    const sources = nativeSourceDir(join(work.path, 'export'), {
      'organisation.csv': ORGANIZATIONS,
      'orgs.csv': ORGANIZATIONS,
      'organizations.xlsx': 'PK\x03\x04',
      'services.xlsx': 'PK\x03\x04',
      'organization_tags.tsv': 'organization_id\ttaxonomy\tterm_code\n',
      'notes.txt': 'to do: add the new pantries\n',
    });
    mkdirSync(join(sources, 'older'));
    writeFileSync(join(sources, 'older', 'Taxonomy_Term.csv'), 'taxonomy,code,name\n');
    symlinkSync('orgs.csv', join(sources, 'orgs-link.csv'));
    const data = temporaryDirectory();
    try {
      const lenient = await runCommand('validate', data.path, [sources]);
      assert.equal(lenient.code, 0, lenient.text);
      assert.match(lenient.text, /^warning: 8 × file not read, e\.g\.$/m);
      // With --strict every warning is printed, as an error.
      const strict = await runCommand('validate', data.path, [sources], { strict: true });
      assert.equal(strict.code, 1);
      const why = (name: string, reason: string): string => `error: ${join(sources, name)}: not read: ${reason} (a warning, fatal with --strict)`;
      const names = 'see docs/data-format.md for the names read';
      assert.deepEqual(errorsOf(strict), [
        why('notes.txt', `not the name of a source file; ${names}`),
        why(join('older', 'Taxonomy_Term.csv'), `not the name of a source file (did you mean taxonomy_terms.csv?); ${names}`),
        why('organisation.csv', `not the name of a source file (did you mean organizations.csv?); ${names}`),
        why('organization_tags.tsv', 'a tab-separated file is not read; save it as CSV, with commas as separators, named for what it holds (see docs/data-format.md)'),
        why('organizations.xlsx', 'a native file is .csv or .ndjson (optionally .gz); save it as CSV'),
        why('orgs-link.csv', `not the name of a source file; ${names}`),
        why('orgs.csv', `not the name of a source file; ${names}`),
        why('services.xlsx', 'a spreadsheet workbook is not read; save each sheet as a CSV file named for what it holds (see docs/data-format.md)'),
      ]);
    } finally {
      data.remove();
    }
  });

  it('says nothing of READMEs, licences, provenance notes, Markdown, dotfiles and lock files', async () => {
    const quiet = ['README', 'README.md', 'readme.txt', 'LICENSE', 'LICENCE-data.txt', 'PROVENANCE.md', 'CHANGELOG', 'NOTICE', 'COPYING', 'notes.md', '.gitkeep', '.DS_Store', '~$organizations.xlsx', 'organizations.csv~', 'Thumbs.db', 'desktop.ini'];
    const sources = nativeSourceDir(join(work.path, 'quiet'), Object.fromEntries(quiet.map((name) => [name, 'not data\n'])));
    const data = temporaryDirectory();
    try {
      const run = await runCommand('validate', data.path, [sources], { strict: true });
      assert.equal(run.code, 0, run.text);
      assert.match(run.results.join('\n'), /; 0 warnings\./);
    } finally {
      data.remove();
    }
  });

  it('is named too in a folder given with its kind', async () => {
    const sources = nativeSourceDir(join(work.path, 'given'), { 'organisations.csv': ORGANIZATIONS, 'README.md': '# Export\n' });
    const data = temporaryDirectory();
    try {
      const run = await runCommand('validate', data.path, [`native:${sources}`], { strict: true });
      assert.deepEqual(errorsOf(run), [
        `error: ${join(sources, 'organisations.csv')}: not read: not the name of a source file (did you mean organizations.csv?); see docs/data-format.md for the names read (a warning, fatal with --strict)`,
      ]);
      const ntee = join(work.path, 'ntee');
      mkdirSync(ntee);
      writeFileSync(join(ntee, 'codes.csv'), readFileSync(new URL('../../data/ntee/ntee_codes.csv', import.meta.url)));
      writeFileSync(join(ntee, 'codes.xml'), '<codes/>\n');
      const kinds = await runCommand('validate', data.path, [`ntee:${ntee}`], { strict: true });
      assert.deepEqual(errorsOf(kinds), [
        `error: ${join(ntee, 'codes.xml')}: not read: not a .csv or .ndjson file, which is what a folder given as ntee: is read for (a warning, fatal with --strict)`,
      ]);
    } finally {
      data.remove();
    }
  });

  it('leaves the bundled data/ folder without a warning of this kind (its READMEs and PROVENANCE notes are not data)', async () => {
    const diagnostics = new Diagnostics({ strict: true });
    const dataFolder = new URL('../../data', import.meta.url).pathname;
    const sources = resolveSources([dataFolder], diagnostics);
    assert.deepEqual(diagnostics.errors, []);
    assert.deepEqual(sources.map((source) => source.kind).sort(), ['irs', 'ntee', 'ntee-crosswalk', 'open-eligibility']);
  });
});

describe('NDJSON sources: each bad line named, the rest read', () => {
  const work = temporaryDirectory();
  after(() => work.remove());
  const NDJSON_EXAMPLE = join(import.meta.dirname, '..', 'fixtures', 'native-ndjson');

  /** The NDJSON example with organizations.ndjson replaced by `lines`; what validate says of it. */
  async function validateOrganizations(name: string, lines: string[]) {
    const directory = join(work.path, name);
    cpSync(NDJSON_EXAMPLE, directory, { recursive: true });
    writeFileSync(join(directory, 'organizations.ndjson'), lines.join('\n'));
    return runCommand('validate', join(work.path, 'data'), [directory]);
  }

  it('reports invalid JSON, a line that is no object, values it cannot keep, missing and unknown fields, each at its line', async () => {
    const good = (id: string) => JSON.stringify({ id, name: `Organization ${id}`, status: 'published' });
    const run = await validateOrganizations('bad-lines', [
      good('SPR-001'),
      '{"id": "X-2", "name": ',
      '["X-3", "an array"]',
      '',
      JSON.stringify({ id: 'X-5', name: 'Big', status: 'published', year_incorporated: 12345678901234567890 }).replace('12345678901234567000', '12345678901234567890'),
      JSON.stringify({ id: 'X-6', name: { text: 'nested' }, status: 'published' }),
      JSON.stringify({ id: 'X-7', status: 'published' }),
      JSON.stringify({ id: 'X-8', name: 'Typo', status: 'published', descripton: 'x' }),
      good('SPR-002'),
    ]);
    assert.equal(run.code, 1, run.text);
    const at = (line: number) => `organizations.ndjson:${line}`;
    assert.match(run.text, new RegExp(`${at(2)}: not valid JSON`));
    assert.match(run.text, new RegExp(`${at(3)}: each line must be one JSON object`));
    assert.match(run.text, new RegExp(`${at(5)} \\[year_incorporated\\]: is a number too large to keep exactly; write it as a string`));
    assert.match(run.text, new RegExp(`${at(6)} \\[name\\]: must be a string, number, boolean or null`));
    assert.match(run.text, new RegExp(`${at(7)} \\[name\\]: missing required field "name"`));
    assert.match(run.text, new RegExp(`${at(8)} \\[descripton\\]: field "descripton" is not used \\(a typo\\?\\)`));
    assert.doesNotMatch(run.text, new RegExp(`${at(1)}\\b|${at(4)}\\b|${at(9)}\\b`), 'good and blank lines pass');
  });

  it('reports an empty file, and a line over the record limit without reading it whole', async () => {
    assert.match((await validateOrganizations('empty', ['', '  ', ''])).text, /organizations\.ndjson: the file is empty/);
    const long = await validateOrganizations('long', [JSON.stringify({ id: 'L-1', name: 'x'.repeat(2 * 1024 * 1024), status: 'published' }), JSON.stringify({ id: 'L-2', name: 'After', status: 'published' })]);
    assert.match(long.text, /organizations\.ndjson:1: a line is longer than 1048576 characters/);
    // Just over the limit, and not last: the line ends within the chunk that takes it past the limit.
    const justOver = await validateOrganizations('just-over', [
      JSON.stringify({ id: 'J-1', name: 'Before', status: 'published' }),
      JSON.stringify({ id: 'J-2', name: 'x'.repeat(1024 * 1024 - 10), status: 'published' }),
      JSON.stringify({ id: 'J-3', name: 'After', status: 'published' }),
    ]);
    assert.match(justOver.text, /organizations\.ndjson:2: a line is longer than 1048576 characters/);
  });
});
