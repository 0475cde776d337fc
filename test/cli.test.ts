import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
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
    assert.match(cli('--help').stderr, /^ {2}serve .*\n {2}import .*\n {2}validate .*\n {2}use .*\n/m, 'one command a line');
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

  it('says in one line, and exits 1, when a port it is to listen on is taken (the main one or the metrics one)', async () => {
    const data = temporaryDirectory();
    const taken = createServer().listen(0, '127.0.0.1');
    try {
      await once(taken, 'listening');
      const port = (taken.address() as { port: number }).port;
      assert.equal(cli('import', '--data-dir', data.path, NATIVE_EXAMPLE).code, 0);
      for (const ports of [['--port', String(port)], ['--port', '0', '--metrics-port', String(port)]]) {
        const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', data.path, '--host', '127.0.0.1', '--log-level', 'silent', ...ports], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const [code] = await once(child, 'exit');
        clearTimeout(timer);
        assert.equal(code, 1, ports.join(' '));
        assert.equal(stderr, `Error: cannot listen on 127.0.0.1:${port} (already in use): choose another --port, --host, --metrics-port or --metrics-host.\n`);
      }
    } finally {
      taken.close();
      data.remove();
    }
  });
});
