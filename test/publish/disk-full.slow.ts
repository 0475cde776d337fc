import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE } from '../helpers/imports.ts';
import { WYOMING } from '../helpers/default-dataset-sample.ts';

/**
 * Issue 38, point 1: a full disk is an ordinary failure. Each case mounts a tmpfs of a given size
 * in a mount namespace of its own (`unshare`, as root; it vanishes with the namespace), publishes a
 * small dataset there, then imports the IRS file of Wyoming into the same data directory: refused
 * at once where the room is clearly too small, or stopped by the full disk at some point of the
 * build. Either way: exit 1, one line naming the directory, nothing left behind, the small dataset
 * still live.
 */

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;
const MB = 1e6;

interface Outcome {
  code: number;
  stderr: string;
  /** The data directory's files (`snapshots/…` for the snapshots folder), after the import. */
  files: string[];
  /** The `current` pointer before and after. */
  pointer: [string, string];
  /** The last progress line printed before the error. */
  lastStage: string | undefined;
}

/** Runs the scenario on a tmpfs of `size` bytes; `tmpInside`: SQLite's temporary files go there too. */
function onSmallDisk(size: number, source: string, results: string, options: { tmpInside?: boolean; command?: 'import' | 'serve' } = {}): Outcome {
  const disk = join(results, `disk-${size}-${options.tmpInside ? 'tmp' : 'data'}-${options.command ?? 'import'}`);
  mkdirSync(disk, { recursive: true });
  const out = `${disk}.out`;
  mkdirSync(out);
  const node = process.execPath;
  const data = `${disk}/var`;
  const second =
    options.command === 'serve'
      ? // The first run of serve on an empty data directory imports the bundled data itself.
        `"${node}" "${CLI}" serve --data-dir "${data}.empty" --host 127.0.0.1 --port 0 --progress lines 2> "${out}/stderr"`
      : `"${node}" "${CLI}" import --data-dir "${data}" --progress lines "${source}" 2> "${out}/stderr"`;
  const script = [
    `mount -t tmpfs -o size=${size} tmpfs "${disk}"`,
    options.tmpInside ? `mkdir "${disk}/tmp" && export TMPDIR="${disk}/tmp"` : 'true',
    `"${node}" "${CLI}" import --data-dir "${data}" --progress none "${NATIVE_EXAMPLE}" > /dev/null`,
    `cat "${data}/current" > "${out}/before"`,
    `${second}; echo $? > "${out}/code"`,
    `cat "${data}/current" > "${out}/after"`,
    `(cd "${data}" && find . -type f | sed 's|^\\./||' | sort) > "${out}/files"`,
    options.command === 'serve' ? `(cd "${data}.empty" && find . | sed 's|^\\./||' | sort) >> "${out}/files"` : 'true',
  ].join(' && ');
  const run = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8', env: { ...process.env, CI: '' } });
  assert.equal(run.status, 0, `the scenario ran: ${run.stderr}`);
  const read = (name: string) => readFileSync(join(out, name), 'utf8');
  const stderr = read('stderr');
  const stages = [...stderr.matchAll(/^(?:reading sources|rendering and writing): .*$/gm)].map((match) => match[0]);
  return {
    code: Number(read('code')),
    stderr,
    files: read('files').split('\n').filter((line) => line !== ''),
    pointer: [read('before').trim(), read('after').trim()],
    lastStage: stages.at(-1),
  };
}

const rootCanMount = (): boolean => process.getuid?.() === 0 && spawnSync('unshare', ['--mount', 'true']).status === 0;

describe('an import on a disk too small for it', { skip: !rootCanMount() && process.env.CI !== 'true' ? 'needs root and unshare (mount namespaces)' : false }, () => {
  const work = temporaryDirectory();
  const source = join(work.path, 'wyoming');

  before(() => {
    for (const folder of ['ntee', 'open-eligibility', 'crosswalk']) cpSync(join(DEFAULT_DATA_DIR, folder), join(source, folder), { recursive: true });
    mkdirSync(join(source, 'irs-eo-bmf'));
    copyFileSync(join(DEFAULT_DATA_DIR, 'irs-eo-bmf/bmf_code_values.csv'), join(source, 'irs-eo-bmf/bmf_code_values.csv'));
    copyFileSync(WYOMING, join(source, 'irs-eo-bmf/eo_wy.csv.gz'));
    // On an ample disk the same scenario publishes: the sizes below are what make it fail.
    const ample = onSmallDisk(100 * MB, source, work.path);
    assert.equal(ample.code, 0, ample.stderr);
    assert.notEqual(ample.pointer[1], ample.pointer[0]);
  });
  after(() => work.remove());

  const assertOrdinaryFailure = (outcome: Outcome, message: RegExp) => {
    assert.equal(outcome.code, 1, outcome.stderr);
    const lines = outcome.stderr.trimEnd().split('\n');
    assert.match(lines.at(-1)!, message);
    assert.match(lines.at(-1)!, / Nothing was published; the live dataset is unchanged\.$/);
    assert.doesNotMatch(outcome.stderr, /TypeError|    at /, 'no internal error, no stack');
    assert.equal(outcome.pointer[1], outcome.pointer[0], 'the live dataset is still the one published before');
    const [live] = outcome.pointer;
    assert.deepEqual(outcome.files, ['current', `snapshots/${live}`, `snapshots/${live}.sha256`], 'no partial file, no lock');
  };

  it('is refused before anything is written when the free space is clearly too small', () => {
    const outcome = onSmallDisk(2 * MB, source, work.path);
    assertOrdinaryFailure(outcome, /^Error: .*\/var\/snapshots: not enough free space: 5,985 organizations need about 4\.5 MB, and \d\.\d MB are free\./);
  });

  it('is refused the same way on the first run of serve, which imports the bundled data', () => {
    const outcome = onSmallDisk(20 * MB, source, work.path, { command: 'serve' });
    assert.equal(outcome.code, 1, outcome.stderr);
    assert.match(outcome.stderr.trimEnd().split('\n').at(-1)!, /^Error: .*\/var\.empty\/snapshots: not enough free space: 326,224 organizations need about 245 MB, and [\d.]+ MB are free\. Nothing was published; the live dataset is unchanged\.$/);
    assert.doesNotMatch(outcome.stderr, /TypeError|    at /);
    assert.deepEqual(outcome.files.filter((file) => file.startsWith('snapshots/') && !file.startsWith(`snapshots/${outcome.pointer[0]}`)), [], 'nothing left in the first data directory');
  });

  // Wyoming's snapshot takes 7.0 MB (its 5,985 organizations and the three taxonomies' terms).
  for (const [size, tmpInside] of [
    [3.5 * MB, false],
    [4.7 * MB, false],
    [5.9 * MB, false],
    [6.8 * MB, true],
  ] as const) {
    it(`stops with one line when the disk fills up while it writes (${size / MB} MB${tmpInside ? ', SQLite temporary files there too' : ''})`, (t) => {
      const outcome = onSmallDisk(size, source, work.path, { tmpInside });
      t.diagnostic(`last progress before the error: ${outcome.lastStage}`);
      assertOrdinaryFailure(outcome, /^Error: .*\/var\/snapshots\/[\w-]+\.building.*: the disk is full \(this import needs about 4\.5 MB; [\d.]+ MB were free when it began writing\)\./);
    });
  }
});
