import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, openSync, closeSync, ftruncateSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { organizationId } from '../../src/hsds/ids.ts';
import { Diagnostics, escapeControlCharacters } from '../../src/sources/files/diagnostics.ts';
import { resolveSources } from '../../src/sources/resolve.ts';
import { MAX_DESCRIPTOR_BYTES } from '../../src/sources/hsds-package-layout.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';
import type { ImportRun } from '../helpers/imports.ts';

/** The official HSDS 3.0 CSV example (CC BY-SA 4.0, Open Referral; see its README), made consistent. */
const HSDS_EXAMPLE = join(import.meta.dirname, '..', 'fixtures', 'hsds-example-consistent');
const CLI = join(import.meta.dirname, '..', '..', 'src', 'cli.ts');

const ORGANIZATIONS = readFileSync(join(NATIVE_EXAMPLE, 'organizations.csv'), 'utf8');
const TAGS = readFileSync(join(NATIVE_EXAMPLE, 'organization_tags.csv'), 'utf8');
/** A row for organizations.csv with the given id, name, status and parent. */
const organization = (id: string, name: string, status = 'published', parent = ''): string => `${id},${name},${status},,,,,,,,,,${parent}\n`;

const errorsOf = (run: ImportRun): string[] => run.output.filter((line) => line.startsWith('error: '));

/** Every line printed is one of the report's own lines: no stack trace, nothing multi-line. */
function assertOnlyReportLines(run: ImportRun): void {
  for (const line of run.output) {
    assert.match(line, /^(error: |warning: |note: | {2}\S|Not publishable: |Publishable: |Published dataset )/, `unexpected line: ${JSON.stringify(line)}`);
    assert.ok(!line.includes('\n'), `a line with a line break: ${JSON.stringify(line)}`);
  }
}

const SECRET = 'root:x:0:0:do-not-echo-this';

describe('sources reached through symbolic links', () => {
  const work = temporaryDirectory();
  const data = join(work.path, 'data');
  const outside = join(work.path, 'outside');
  before(() => {
    mkdirSync(outside);
    writeFileSync(join(outside, 'passwd'), `${SECRET}\n`);
    writeFileSync(join(outside, 'organizations.csv'), ORGANIZATIONS);
  });
  after(() => work.remove());

  it('refuses a source file that links outside its folder, naming the link and where it leads, never its contents', async () => {
    const sources = nativeSourceDir(join(work.path, 'file-link'));
    const link = join(sources, 'organizations.csv');
    (await import('node:fs')).rmSync(link);
    symlinkSync(join(outside, 'passwd'), link);
    const run = await runCommand('validate', data, [sources]);
    assert.equal(run.code, 1, run.text);
    // Then, as when the file is missing, the tags and identifiers name organizations not in the input.
    assert.equal(
      errorsOf(run)[0],
      `error: ${link}: leads (through a symbolic link) to ${realpathSync(join(outside, 'passwd'))}, outside ${sources}; a source must be inside the folder given: copy it in, or give it as a source of its own`,
    );
    assert.ok(!run.text.includes('root:x'), run.text);
    assertOnlyReportLines(run);
  });

  it('refuses a path through a linked folder that leads outside', async () => {
    const sources = nativeSourceDir(join(work.path, 'folder-link'));
    symlinkSync(outside, join(sources, 'more'));
    const run = await runCommand('validate', data, [sources]);
    assert.equal(run.code, 1, run.text);
    assert.deepEqual(errorsOf(run), [
      `error: ${join(sources, 'more')}: leads (through a symbolic link) to ${realpathSync(outside)}, outside ${sources}; a source must be inside the folder given: copy it in, or give it as a source of its own`,
    ]);
  });

  it('refuses files of the official HSDS example linked outside the package, directly or through a folder named in datapackage.json', async () => {
    const direct = join(work.path, 'hsds-direct');
    cpSync(HSDS_EXAMPLE, direct, { recursive: true });
    (await import('node:fs')).rmSync(join(direct, 'organizations.csv'));
    symlinkSync(join(outside, 'passwd'), join(direct, 'organizations.csv'));
    const throughFolder = join(work.path, 'hsds-through-folder');
    cpSync(HSDS_EXAMPLE, throughFolder, { recursive: true });
    symlinkSync(outside, join(throughFolder, 'tables'));
    writeFileSync(join(throughFolder, 'datapackage.json'), JSON.stringify({ resources: [{ name: 'organizations', path: 'tables/organizations.csv' }] }));
    const run = await runCommand('validate', data, [`hsds:${direct}`, `hsds:${throughFolder}`]);
    assert.equal(run.code, 1, run.text);
    assert.deepEqual(errorsOf(run), [
      `error: ${join(direct, 'organizations.csv')}: leads (through a symbolic link) to ${realpathSync(join(outside, 'passwd'))}, outside ${direct}; a source must be inside the folder given: copy it in, or give it as a source of its own`,
      `error: ${join(throughFolder, 'tables', 'organizations.csv')}: leads (through a symbolic link) to ${realpathSync(join(outside, 'organizations.csv'))}, outside ${throughFolder}; a source must be inside the folder given: copy it in, or give it as a source of its own`,
    ]);
    assert.ok(!run.text.includes('root:x'), run.text);
  });

  it('follows links that stay inside the folder, reading each file once, even through a link back to the folder itself', async () => {
    const sources = nativeSourceDir(join(work.path, 'inside-links'));
    const fs = await import('node:fs');
    mkdirSync(join(sources, 'export'));
    fs.renameSync(join(sources, 'organizations.csv'), join(sources, 'export', 'organizations.csv'));
    symlinkSync(join('export', 'organizations.csv'), join(sources, 'organizations.csv'));
    symlinkSync('..', join(sources, 'export', 'up'));
    const run = await runCommand('validate', data, [sources]);
    assert.equal(run.code, 0, run.text);
    assert.match(run.text, /^Publishable: 4 organizations/m);
  });

  it('names a symbolic link loop and a link to nothing, in one line each, whether found in a folder or given', async () => {
    const sources = nativeSourceDir(join(work.path, 'loops'));
    const fs = await import('node:fs');
    fs.rmSync(join(sources, 'organizations.csv'));
    fs.rmSync(join(sources, 'organization_tags.csv'));
    symlinkSync('organizations.csv', join(sources, 'organizations.csv'));
    symlinkSync('gone.csv', join(sources, 'organization_tags.csv'));
    symlinkSync('loop', join(sources, 'loop'));
    const run = await runCommand('validate', data, [sources, join(sources, 'loop')]);
    assert.equal(run.code, 1, run.text);
    assert.deepEqual(errorsOf(run).slice(0, 3), [
      `error: ${join(sources, 'organization_tags.csv')}: is a symbolic link to gone.csv, which does not exist`,
      `error: ${join(sources, 'organizations.csv')}: is a symbolic link loop (a link that leads back to itself); fix or remove the link`,
      `error: ${join(sources, 'loop')}: is a symbolic link loop (a link that leads back to itself); fix or remove the link`,
    ]);
    assertOnlyReportLines(run);
  });
});

describe('sources that are not regular files', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  /** Runs `validate` in a child process that is killed if it hangs (opening a FIFO would block it). */
  function validateInChild(sources: string[]): { status: number | null; output: string; signal: NodeJS.Signals | null } {
    const run = spawnSync(process.execPath, [CLI, 'validate', '--progress', 'none', ...sources], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { status: run.status, signal: run.signal, output: `${run.stdout}${run.stderr}` };
  }

  it('refuses named pipes at once, found in a folder, in a package, or given, and a device given through a link', () => {
    const native = nativeSourceDir(join(work.path, 'native'));
    execFileSync('rm', [join(native, 'organization_tags.csv')]);
    execFileSync('mkfifo', [join(native, 'organization_tags.csv')]);
    const pipes = join(work.path, 'pipes');
    mkdirSync(pipes);
    execFileSync('mkfifo', [join(pipes, 'organizations.csv')]);
    const descriptorPipe = join(work.path, 'hsds-descriptor-pipe');
    cpSync(HSDS_EXAMPLE, descriptorPipe, { recursive: true });
    execFileSync('mkfifo', [join(descriptorPipe, 'datapackage.json')]);
    const tablePipe = join(work.path, 'hsds-table-pipe');
    cpSync(HSDS_EXAMPLE, tablePipe, { recursive: true });
    execFileSync('rm', [join(tablePipe, 'taxonomies.csv')]);
    execFileSync('mkfifo', [join(tablePipe, 'taxonomies.csv')]);
    const device = join(work.path, 'device');
    mkdirSync(device);
    symlinkSync('/dev/zero', join(device, 'organizations.csv'));

    const run = validateInChild([native, `native:${join(pipes, 'organizations.csv')}`, `hsds:${descriptorPipe}`, `hsds:${tablePipe}`, join(device, 'organizations.csv')]);
    assert.equal(run.signal, null, `validate hung on a FIFO and was killed: ${run.output}`);
    assert.equal(run.status, 1, run.output);
    const pipe = 'is a named pipe (FIFO), not a regular file; give a regular file';
    for (const expected of [
      `error: ${join(native, 'organization_tags.csv')}: ${pipe}`,
      `error: ${join(pipes, 'organizations.csv')}: ${pipe}`,
      `error: ${join(descriptorPipe, 'datapackage.json')}: ${pipe}`,
      `error: ${join(tablePipe, 'taxonomies.csv')}: ${pipe}`,
      `error: ${join(device, 'organizations.csv')}: is a device, not a regular file; give a regular file`,
    ]) {
      assert.ok(run.output.split('\n').includes(expected), `missing ${JSON.stringify(expected)} in:\n${run.output}`);
    }
  });

  it('refuses them while the sources are resolved, before anything is read', () => {
    const diagnostics = new Diagnostics();
    const native = join(work.path, 'native');
    const sources = resolveSources([native, `native:${join(work.path, 'pipes')}`], diagnostics);
    const pipe = 'is a named pipe (FIFO), not a regular file; give a regular file';
    assert.deepEqual(
      diagnostics.errors.map(({ file, message }) => `${file}: ${message}`),
      [`${join(native, 'organization_tags.csv')}: ${pipe}`, `${join(work.path, 'pipes', 'organizations.csv')}: ${pipe}`],
    );
    assert.ok(!sources.flatMap((source) => source.files).some((file) => file.endsWith('organization_tags.csv') || file.includes('pipes')));
  });

  it('refuses a named pipe put in place of a checked file before it is opened, without blocking', () => {
    const pipe = join(work.path, 'swapped.csv');
    execFileSync('mkfifo', [pipe]);
    const script = `
      import { Diagnostics } from ${JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'sources', 'files', 'diagnostics.ts'))};
      import { readCsv } from ${JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'sources', 'files', 'csv.ts'))};
      const diagnostics = new Diagnostics();
      for await (const row of readCsv(${JSON.stringify(pipe)}, { required: ['id'] }, diagnostics)) console.log('row', row);
      for (const error of diagnostics.errors) console.log(error.message);
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(run.signal, null, 'reading a FIFO hung');
    assert.equal(run.stdout.trim(), 'is a named pipe (FIFO), not a regular file; give a regular file', run.stderr);
  });
});

describe('control characters in what import and validate print', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  it('escapes C0 and C1 controls, DEL, bidirectional controls and line separators, and nothing else', () => {
    assert.equal(escapeControlCharacters('a\u0000b\u0007c\r\n\u001b[2J\u007f\u009b\u202e\u2066\u2028é中'), 'a\\x00b\\x07c\\x0d\\x0a\\x1b[2J\\x7f\\x9b\\u202e\\u2066\\u2028é中');
  });

  it('prints an id crafted to retitle and clear the terminal escaped, on one line', async () => {
    const crafted = 'SPR-\u001b]0;pwned\u0007-\u001b[2J';
    const sources = nativeSourceDir(join(work.path, 'crafted'), {
      'organizations.csv': `${ORGANIZATIONS}${organization(crafted, 'Crafted')}`,
      'organization_tags.csv': `${TAGS}SPR-001,city_services,\u009b31m\n`,
    });
    const run = await runCommand('validate', join(work.path, 'data'), [sources]);
    assert.equal(run.code, 1, run.text);
    for (const line of run.output) assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(line), `raw control character in ${JSON.stringify(line)}`);
    assert.ok(run.output.includes(`error: ${join(sources, 'organizations.csv')}:7 [id]: "SPR-\\x1b]0;pwned\\x07-\\x1b[2J" holds a control character (shown escaped); an id or code must be printable text`), run.text);
    assert.ok(run.output.includes(`error: ${join(sources, 'organization_tags.csv')}:7 [term_code]: "\\x9b31m" holds a control character (shown escaped); an id or code must be printable text`), run.text);
    assertOnlyReportLines(run);
  });

  it('escapes control characters in a warning quoting a value, and in a file name', async () => {
    const sources = nativeSourceDir(join(work.path, 'crafted-\u001b[2J-folder'), {
      'organizations.csv': ORGANIZATIONS.replace('info@food.springfield.example', 'info\u001b]0;pwned\u0007'),
    });
    const run = await runCommand('validate', join(work.path, 'data'), [sources]);
    assert.equal(run.code, 0, run.text);
    assert.ok(run.output.includes(`  ${escapeControlCharacters(join(sources, 'organizations.csv'))}:2 [email]: "info\\x1b]0;pwned\\x07" is not an email address; dropped`), run.text);
    assert.ok(!run.text.includes('\u001b'), run.text);
  });
});

describe('ids and text: control characters, Unicode forms', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  it('refuses NUL and control characters in ids and codes, at their file, line and field', async () => {
    const sources = nativeSourceDir(join(work.path, 'nul'), {
      'organizations.csv': `${ORGANIZATIONS}${organization('SPR-\u0000009', 'Nul Org')}`,
      'taxonomy_terms.csv': `${readFileSync(join(NATIVE_EXAMPLE, 'taxonomy_terms.csv'), 'utf8')}city_services,le\u0008gal,Legal Aid,,,\n`,
      'organization_identifiers.csv': `${readFileSync(join(NATIVE_EXAMPLE, 'organization_identifiers.csv'), 'utf8')}SPR-002,,Charity number,12\u000b34\n`,
    });
    const run = await runCommand('validate', join(work.path, 'data'), [sources]);
    assert.equal(run.code, 1, run.text);
    const errors = errorsOf(run).map((line) => line.slice(line.lastIndexOf('/') + 1));
    assert.deepEqual(errors.sort(), [
      'organization_identifiers.csv:4 [identifier]: "12\\x0b34" holds a control character (shown escaped); an id or code must be printable text',
      'organizations.csv:7 [id]: "SPR-\\x00009" holds a control character (shown escaped); an id or code must be printable text',
      'taxonomy_terms.csv:7 [code]: "le\\x08gal" holds a control character (shown escaped); an id or code must be printable text',
    ]);
  });

  it('reads every field in NFC: an id written decomposed links to the same id composed, and names are served composed', async () => {
    const composed = 'Caf\u00e9-1';
    const decomposed = 'Cafe\u0301-1';
    const sources = nativeSourceDir(join(work.path, 'nfc'), {
      'organizations.csv': `${ORGANIZATIONS}${organization(decomposed, 'Cafe\u0301 Solidaire')}`,
      'organization_tags.csv': `${TAGS}${composed},city_services,food\n`,
    });
    const data = temporaryDirectory();
    try {
      const run = await runCommand('import', data.path, [sources]);
      assert.equal(run.code, 0, run.text);
      const { app } = await serveDataDir(data.path);
      try {
        const cafe = await getJson(app, `${API}/organizations/${organizationId(composed)}`);
        assert.equal(cafe.status, 200);
        assert.equal(cafe.body.name, 'Caf\u00e9 Solidaire');
        assert.equal((cafe.body.attributes as unknown[]).length, 1);
      } finally {
        await app.close();
      }
    } finally {
      data.remove();
    }
  });

  it('treats NFC and NFD twins of an id as one id: defined twice', async () => {
    const sources = nativeSourceDir(join(work.path, 'twins'), {
      'organizations.csv': `${ORGANIZATIONS}${organization('Caf\u00e9-1', 'One')}${organization('Cafe\u0301-1', 'Two')}`,
    });
    const run = await runCommand('validate', join(work.path, 'data'), [sources]);
    assert.equal(run.code, 1, run.text);
    assert.match(run.text, /organizations\.csv:8 \[id\]: organization Café-1 is defined twice \(first at .*organizations\.csv:7\)/);
  });
});

describe('statuses', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  it('reads "Published " and "PUBLISHED" as published, with a warning saying so; an unknown status stays an error', async () => {
    const sources = nativeSourceDir(join(work.path, 'statuses'), {
      'organizations.csv': `${ORGANIZATIONS}${organization('SPR-010', 'Spaced', 'Published ')}${organization('SPR-011', 'Shouting', 'PUBLISHED')}${organization('SPR-012', 'Quiet', ' unpublished')}`,
    });
    const data = temporaryDirectory();
    try {
      const run = await runCommand('import', data.path, [sources]);
      assert.equal(run.code, 0, run.text);
      assert.match(run.text, /^warning: 3 × value read ignoring case and spaces, e\.g\.$/m);
      assert.match(run.text, /^ {2}.*organizations\.csv:7 \[status\]: "Published " was read as "published"$/m);
      assert.match(run.text, /^ {2}.*organizations\.csv:8 \[status\]: "PUBLISHED" was read as "published"$/m);
      assert.match(run.text, /^Published dataset [0-9a-f]{16}: 6 organizations \(2 unpublished left out\)/m);
      const strict = await runCommand('validate', data.path, [sources], { strict: true });
      assert.equal(strict.code, 1);
      const unknown = nativeSourceDir(join(work.path, 'unknown'), { 'organizations.csv': `${ORGANIZATIONS}${organization('SPR-013', 'Maybe', 'Draft ')}` });
      const refused = await runCommand('validate', data.path, [unknown]);
      assert.equal(refused.code, 1);
      assert.match(refused.text, /organizations\.csv:7 \[status\]: must be one of published, unpublished, got "Draft"/);
    } finally {
      data.remove();
    }
  });
});

describe('parent-organization cycles', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  it('reports each cycle once, naming its ids: two organizations, one its own parent, a longer one; a chain leading into a cycle is not one', async () => {
    const long = Array.from({ length: 8 }, (_, index) => organization(`L-${index}`, `Long ${index}`, 'published', `L-${(index + 1) % 8}`)).join('');
    const sources = nativeSourceDir(join(work.path, 'cycles'), {
      'organizations.csv':
        ORGANIZATIONS +
        organization('A', 'Alpha', 'published', 'B') +
        organization('B', 'Beta', 'unpublished', 'A') +
        organization('SELF', 'Itself', 'published', 'SELF') +
        organization('TAIL', 'Tail', 'published', 'A') +
        long,
    });
    const run = await runCommand('validate', join(work.path, 'data'), [sources]);
    assert.equal(run.code, 1, run.text);
    const errors = errorsOf(run).map((line) => line.slice(line.lastIndexOf('/') + 1));
    assert.deepEqual(errors, [
      "organizations.csv:7 [parent_id]: organizations A → B → A are each other's parents; parent links must form a tree",
      "organizations.csv:11 [parent_id]: organizations L-0 → L-1 → L-2 → L-3 → L-4 → … (8 organizations in all) are each other's parents; parent links must form a tree",
      'organizations.csv:9 [parent_id]: organization SELF names itself as its parent; parent links must form a tree',
    ]);
  });

  it('reports a cycle made with the official HSDS example at its parent_organization_id column', async () => {
    const packageDir = join(work.path, 'hsds-cycle');
    cpSync(HSDS_EXAMPLE, packageDir, { recursive: true });
    const example = 'd9d5e0f5-d3ce-4f73-9a2f-4dd0ecc6c610';
    // The example's organization names cd09a387-… as its parent, which is not in it: here it is, with the example as its parent.
    const parent = 'cd09a387-91f4-4555-94ec-e799c35344cd';
    const organizations = readFileSync(join(packageDir, 'organizations.csv'), 'utf8');
    const eol = organizations.includes('\r\n') ? '\r\n' : '\n';
    writeFileSync(join(packageDir, 'organizations.csv'), `${organizations.trimEnd()}${eol}${parent},Parent of the example,,,,,,,,,,,${example}${eol}`);
    const run = await runCommand('validate', join(work.path, 'data'), [packageDir]);
    assert.equal(run.code, 1, run.text);
    assert.deepEqual(errorsOf(run), [
      `error: ${join(packageDir, 'organizations.csv')}:3 [parent_organization_id]: organizations ${parent} → ${example} → ${parent} are each other's parents; parent links must form a tree`,
    ]);
  });

  it('accepts parents that form a tree, however deep', async () => {
    const chain = Array.from({ length: 200 }, (_, index) => organization(`D-${index}`, `Deep ${index}`, 'published', index === 0 ? '' : `D-${index - 1}`)).join('');
    const sources = nativeSourceDir(join(work.path, 'tree'), { 'organizations.csv': ORGANIZATIONS + chain });
    const run = await runCommand('validate', join(work.path, 'data'), [sources]);
    assert.equal(run.code, 0, run.text);
  });
});

describe('datapackage.json size', () => {
  const work = temporaryDirectory();
  after(() => work.remove());

  it(`refuses a datapackage.json over ${MAX_DESCRIPTOR_BYTES / 1024 / 1024} MiB without reading it`, async () => {
    const packageDir = join(work.path, 'package');
    cpSync(HSDS_EXAMPLE, packageDir, { recursive: true });
    // 200 MiB, sparse: reading it would take time and memory, and then fail as JSON, not as too large.
    const descriptor = openSync(join(packageDir, 'datapackage.json'), 'w');
    ftruncateSync(descriptor, 200 * 1024 * 1024);
    closeSync(descriptor);
    const run = await runCommand('validate', join(work.path, 'data'), [packageDir]);
    assert.equal(run.code, 1, run.text);
    assert.deepEqual(errorsOf(run), [
      `error: ${join(packageDir, 'datapackage.json')}: is 209,715,200 bytes; the limit for a datapackage.json is 10 MiB (it describes the tables; their rows belong in the CSV files)`,
    ]);
  });

  it('reads one at the limit', async () => {
    const packageDir = join(work.path, 'package-at-limit');
    cpSync(HSDS_EXAMPLE, packageDir, { recursive: true });
    const json = JSON.stringify({ resources: [{ name: 'organizations', path: 'organizations.csv' }] });
    writeFileSync(join(packageDir, 'datapackage.json'), json + ' '.repeat(MAX_DESCRIPTOR_BYTES - json.length));
    const run = await runCommand('validate', join(work.path, 'data'), [packageDir]);
    assert.equal(run.code, 0, run.text);
  });
});
