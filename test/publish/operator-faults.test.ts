import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE } from '../helpers/imports.ts';

/**
 * What an operator sees when the data directory or a source is not as it should be: one line that
 * names the path and says what is wrong, printed once.
 */

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;
const HSDS_EXAMPLE = new URL('../fixtures/hsds-example-consistent', import.meta.url).pathname;

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none' }, timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('a data directory whose current is a directory', () => {
  it('is refused by serve, import and use with the path, and serve says what to do', () => {
    const data = temporaryDirectory();
    try {
      assert.equal(cli('import', '--data-dir', data.path, NATIVE_EXAMPLE).code, 0);
      const pointer = join(data.path, 'current');
      const live = readFileSync(pointer, 'utf8').trim();
      rmSync(pointer);
      mkdirSync(pointer);
      const serve = cli('serve', '--port', '0', '--data-dir', data.path);
      assert.equal(serve.code, 1, serve.stderr);
      const [problem, advice] = serve.stderr.trimEnd().split('\n');
      assert.equal(problem, `Error: ${pointer} is a directory, where the file naming the live snapshot belongs (move it away first), so there is nothing to serve. Nothing was changed.`);
      assert.match(advice!, new RegExp(`^The newest intact snapshot is ${live} `));
      const again = cli('import', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.equal(again.code, 1);
      assert.equal(again.stderr, `Error: ${pointer}: is a directory. Nothing was published; the live dataset is unchanged.\n`);
      const use = cli('use', '--data-dir', data.path, live);
      assert.equal(use.code, 1);
      assert.equal(use.stderr, `Error: ${pointer}: is a directory\n`);
    } finally {
      data.remove();
    }
  });
});

describe('serve on an empty data directory of a read-only file system', () => {
  it('says the file system is read-only, naming the directory it could not make, not that it does not exist', () => {
    const scratch = temporaryDirectory();
    try {
      const volume = join(scratch.path, 'volume');
      mkdirSync(volume);
      const script = [
        'set -u',
        'mount -t tmpfs -o size=1200k tmpfs "$VOLUME"',
        'mkdir "$VOLUME/data"',
        'mount -o remount,ro "$VOLUME"',
        '"$NODE" "$CLI" serve --progress none --port 0 --data-dir "$VOLUME/data" 2>&1; echo "exit=$?"',
      ].join('\n');
      const run = spawnSync('unshare', ['--map-root-user', '--mount', 'sh', '-c', script], { encoding: 'utf8', env: { ...process.env, VOLUME: volume, NODE: process.execPath, CLI }, timeout: 120_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(
        run.stdout,
        `Nothing published in ${volume}/data yet: importing the default dataset from data/ (once).\n` +
          `Error: ${volume}/data/snapshots: the file system is read-only. Nothing was published; the live dataset is unchanged.\nexit=1\n`,
      );
    } finally {
      scratch.remove();
    }
  });
});

describe('an HSDS package whose datapackage.json lists a file under its default name that links outside', () => {
  it('prints the refusal once, and counts one error', () => {
    const work = temporaryDirectory();
    try {
      const outside = join(work.path, 'outside');
      const pkg = join(work.path, 'package');
      mkdirSync(outside);
      cpSync(HSDS_EXAMPLE, pkg, { recursive: true });
      renameSync(join(pkg, 'organizations.csv'), join(outside, 'organizations.csv'));
      symlinkSync(join(outside, 'organizations.csv'), join(pkg, 'organizations.csv'));
      writeFileSync(join(pkg, 'datapackage.json'), JSON.stringify({ resources: [{ name: 'organizations', path: 'organizations.csv' }] }));
      const run = cli('validate', `hsds:${pkg}`);
      assert.equal(run.code, 1);
      const refusal = `error: ${join(pkg, 'organizations.csv')}: leads (through a symbolic link) to ${realpathSync(join(outside, 'organizations.csv'))}, outside ${pkg}; a source must be inside the folder given: copy it in, or give it as a source of its own`;
      assert.deepEqual(run.stderr.split('\n').filter((line) => line.startsWith('error: ')), [refusal]);
      assert.match(run.stdout + run.stderr, /Not publishable: 1 error, /);
    } finally {
      work.remove();
    }
  });
});
