import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { currentSnapshotPath } from '../src/store/snapshot-directory.ts';
import { temporaryDirectory } from './helpers/app.ts';
import { NATIVE_EXAMPLE } from './helpers/imports.ts';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none' } });
  return { code: run.status, stderr: run.stderr };
}

describe('the hsds-org-api command', () => {
  for (const command of ['serve', 'import', 'validate']) {
    it(`explains ${command} with --help`, () => {
      const { code, stderr } = cli(command, '--help');
      assert.equal(code, 0);
      assert.match(stderr, new RegExp(`Usage: hsds-org-api ${command}`));
      assert.match(stderr, /--data-dir|--max-errors/);
    });
  }

  it('lists its commands, and refuses an unknown one or a bad option with exit code 2', () => {
    assert.match(cli('--help').stderr, /serve[\s\S]*import[\s\S]*validate/);
    assert.equal(cli('publish').code, 2);
    const bad = cli('import', '--max-errors', 'lots', 'x');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /max errors must be an integer/);
    const trustingAll = cli('serve', '--trust-proxy', 'true');
    assert.equal(trustingAll.code, 2);
    assert.match(trustingAll.stderr, /^Error: trust proxy "true" would believe X-Forwarded-\* from any client .*: give the number of proxies in front \(e\.g\. 1\) or their addresses/);
  });

  it('exits 0 for publishable sources and 1 for bad ones, publishing only the good', () => {
    const data = temporaryDirectory();
    try {
      assert.equal(cli('validate', NATIVE_EXAMPLE).code, 0);
      const missing = cli('import', '--data-dir', data.path, '/nonexistent/organizations.csv');
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /\/nonexistent\/organizations\.csv: the file does not exist/);
      assert.equal(currentSnapshotPath(data.path), undefined);
      const good = cli('import', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.equal(good.code, 0, good.stderr);
      assert.match(good.stderr, /Published dataset [0-9a-f]{16}/);
      assert.ok(currentSnapshotPath(data.path));
    } finally {
      data.remove();
    }
  });
});
