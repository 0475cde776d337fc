import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NODE_FLAGS } from '../bin/node-flags.js';
import { CONFIG_OPTIONS } from '../src/config-options.ts';
import type { Command, OptionSpec, ValueForm } from '../src/config-options.ts';
import { currentSnapshotPath } from '../src/store/sqlite/snapshot-directory.ts';
import { temporaryDirectory } from './helpers/app.ts';
import { NATIVE_EXAMPLE } from './helpers/imports.ts';
import { freePort, waitFor } from './helpers/wait.ts';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;
const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const COMMANDS: Command[] = ['serve', 'import', 'validate', 'use', 'migrate'];

/** Runs the command as the starter in bin/ runs it (src/cli.ts with NODE_FLAGS), or through that starter. */
function cli(...args: string[]) {
  return run([...NODE_FLAGS, CLI], args);
}

function run(program: string[], args: string[]) {
  const child = spawnSync(process.execPath, [...program, ...args], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none' } });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** Text as one line, its words single-spaced: what a wrapped text reads as. */
const unwrapped = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** A command's `--help`, run once per command for every test that reads it. */
const helpRuns = new Map<Command, ReturnType<typeof cli>>();
const helpOf = (command: Command) => helpRuns.get(command) ?? helpRuns.set(command, cli(command, '--help')).get(command)!;

/** What --help says each form of value is. */
const FORM_HELP: Record<ValueForm, string> = {
  'http url': 'an absolute http(s) URL',
  'base url': 'an absolute http(s) URL without a query or fragment',
  'postgres url': 'a postgres:// or postgresql:// URL',
  email: 'an email address',
  'org-id': 'an org-id.guide identifier: the list code, a dash, the identifier (e.g. US-EIN-530196605)',
  'one line': 'plain text on one line',
  proxies: '0 to 16, or IP addresses, CIDR ranges or loopback, linklocal, uniquelocal, comma-separated',
};

describe('the hsds-org-api command', () => {
  for (const command of COMMANDS) {
    it(`explains ${command} with --help, on stdout, in lines of at most 100 characters, every option's text in full`, () => {
      const { code, stdout: help, stderr } = helpOf(command);
      assert.deepEqual({ code, stderr }, { code: 0, stderr: '' });
      assert.match(help, new RegExp(`^Usage: hsds-org-api ${command}`));
      const lines = help.trimEnd().split('\n');
      assert.deepEqual(lines.filter((line) => line.length > 100), [], 'no line longer than 100 characters');
      // Every description starts at one column, whatever the length of a flag (a longer one stands alone).
      const optionLines = lines.slice(lines.indexOf('Options (flag, then its environment variable):') + 1);
      const columns = new Set(optionLines.map((line) => line.search(/(?<=\S {2,}|^ {3,})\S/)).filter((column) => column !== -1));
      assert.equal(columns.size, 1, `descriptions start at columns ${[...columns].join(', ')}`);
      const [column] = columns;
      const descriptions = unwrapped(optionLines.map((line) => (line.slice(column! - 2, column) === '  ' ? line.slice(column) : '')).join(' '));
      const options = (Object.entries(CONFIG_OPTIONS) as [string, OptionSpec][]).filter(([, option]) => option.commands.includes(command));
      for (const [name, option] of options) {
        const values =
          option.integer !== undefined
            ? `${option.integer.min} to ${option.integer.max}; `
            : option.choices !== undefined
              ? `${option.choices.join(', ')}; `
              : option.form !== undefined
                ? `${FORM_HELP[option.form]}${option.list ? ', comma-separated' : ''}; `
                : '';
        assert.ok(descriptions.includes(unwrapped(`${option.help} (${values}default: ${option.default || 'unset'})`)), `the help of --${name}, whole, with the values it takes`);
        assert.match(help, new RegExp(`^ {2}--${name}\\b.*\n {2}${option.env}\\b`, 'm'), `--${name}, then ${option.env} below it`);
      }
      assert.ok(optionLines.some((line) => /^ {2}-h, --help {2,}\S/.test(line)) && optionLines.some((line) => /^ {2}-v, --version {2,}\S/.test(line)));
    });
  }

  it('explains itself with --help, -h or help (exit 0, stdout), each command summed up in full on a line', () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const { code, stdout, stderr } = cli(...args);
      assert.equal(code, 0, args.join(' '));
      assert.equal(stderr, '', args.join(' '));
      assert.match(stdout, /^Usage: hsds-org-api <command> \[options\]/, args.join(' '));
    }
    const help = cli('--help').stdout;
    assert.deepEqual(help.split('\n').filter((line) => line.length > 100), []);
    for (const command of COMMANDS) {
      const summary = new RegExp(`^ {2}${command} +(.*)$`, 'm').exec(help)?.[1];
      assert.match(summary ?? '', /\.$/, `${command}: a whole sentence`);
      assert.ok(unwrapped(helpOf(command).stdout).includes(summary!), `${command}: its help starts from the same sentence`);
    }
    // -h is --help, for a command as for the whole (the same flag list serves every command).
    assert.deepEqual(cli('use', '-h'), helpOf('use'), 'use -h as use --help');
    const bare = cli();
    assert.equal(bare.code, 2, 'no command at all is a usage error');
    assert.match(bare.stderr, /^Usage: /);
  });

  it('runs the same through its starter in bin/ (which picks the Node to run on), with its exit codes', () => {
    for (const args of [['--version'], ['serve', '--help'], ['publish'], ['import', '--data-dir', '/nonexistent', '/nonexistent/organizations.csv']]) {
      assert.deepEqual(run([BIN], args), cli(...args), args.join(' '));
    }
  });

  it('prints its version with --version or -v, alone or after any command, and exits 0', () => {
    for (const args of [['--version'], ['-v'], ['serve', '--version'], ['import', '-v', '/nonexistent'], ['validate', '--strict', '--version']]) {
      const { code, stdout, stderr } = cli(...args);
      assert.deepEqual({ code, stdout, stderr }, { code: 0, stdout: `${VERSION}\n`, stderr: '' }, args.join(' '));
    }
  });

  it('refuses an unknown command or a bad option with exit code 2', () => {
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
      assert.equal(missing.stdout, 'Not publishable: 1 error, 0 warnings. Nothing was published; the live dataset is unchanged.\n');
      assert.equal(currentSnapshotPath(data.path), undefined);
      const good = cli('import', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.equal(good.code, 0, good.stderr);
      assert.ok(currentSnapshotPath(data.path));
    } finally {
      data.remove();
    }
  });

  it('prints the verdict and what was published on stdout, in words of the right number; progress and diagnostics on stderr', () => {
    const data = temporaryDirectory();
    try {
      const imported = cli('import', '--progress', 'lines', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.equal(imported.code, 0, imported.stderr);
      assert.match(imported.stdout, /^Published dataset [0-9a-f]{16}: 4 organizations \(1 unpublished left out\), 1 taxonomy, 5 taxonomy terms; 0 warnings\. Took [\d.]+ s, peak RSS \d+ MiB\.\n$/);
      assert.match(imported.stderr, /^reading sources: /m);
      assert.doesNotMatch(imported.stderr, /Published/);
      const again = cli('import', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.match(again.stdout, /^Unchanged: dataset [0-9a-f]{16} \(published .*\) is already live; 0 warnings\. Took [\d.]+ s\.\n$/);
      // The example again with one organization changed, one removed and one added: what changed is said.
      const first = /^Published dataset ([0-9a-f]{16})/.exec(imported.stdout)![1]!;
      const source = temporaryDirectory();
      try {
        cpSync(NATIVE_EXAMPLE, source.path, { recursive: true });
        const edit = (file: string, change: (text: string) => string) => writeFileSync(join(source.path, file), change(readFileSync(join(source.path, file), 'utf8')));
        const without = (id: string) => (text: string) => text.split('\n').filter((line) => !line.startsWith(`${id},`)).join('\n');
        edit('organizations.csv', (text) => `${without('SPR-004')(text).replace('Hot lunch every weekday.', 'Hot lunch every day.').trimEnd()}\nSPR-007,Riverside Tenants Union,published,,Helps renters.,,,,,,,,\n`);
        edit('organization_tags.csv', without('SPR-004'));
        edit('organization_identifiers.csv', without('SPR-004'));
        const changed = cli('import', '--data-dir', data.path, source.path);
        assert.equal(changed.code, 0, changed.stderr);
        assert.match(changed.stdout, new RegExp(`^Published dataset [0-9a-f]{16}: 4 organizations \\(1 unpublished left out\\), 1 taxonomy, 5 taxonomy terms; since ${first}, 2 organizations added or changed and 1 removed; 0 warnings\\. Took `));
      } finally {
        source.remove();
      }
      const validated = cli('validate', NATIVE_EXAMPLE);
      assert.match(validated.stdout, /^Publishable: 4 organizations \(1 unpublished left out\), 1 taxonomy, 5 taxonomy terms; 0 warnings\. Checked in /);
      assert.equal(validated.stderr, '');
      const invalid = cli('validate', '/nonexistent/organizations.csv');
      assert.equal(invalid.code, 1);
      assert.equal(invalid.stdout, 'Not publishable: 1 error, 0 warnings.\n');
      assert.match(invalid.stderr, /^error: /);
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

  it('says where to look once listening (home page, API, docs), even at --log-level warn, and one line when it stops', async () => {
    const data = temporaryDirectory();
    try {
      assert.equal(cli('import', '--data-dir', data.path, NATIVE_EXAMPLE).code, 0);
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', data.path, '--host', '127.0.0.1', '--port', String(port), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = once(child, 'exit');
      try {
        await waitFor(() => stderr.includes('\n'), 20_000, 'the server to say it is listening');
        assert.equal(stderr, `Serving ${origin}/ — API ${origin}/api/hsds/v3/, docs ${origin}/api/hsds/v3/docs\n`);
        for (const path of ['/', '/api/hsds/v3/', '/api/hsds/v3/docs']) assert.equal((await fetch(`${origin}${path}`)).status, 200, path);
        child.kill('SIGTERM');
        const [code] = await exited;
        assert.equal(code, 0);
        assert.equal(stderr.split('\n').slice(1).join('\n'), 'Stopped.\n');
        assert.equal(stdout, '', 'nothing logged at warn');
      } finally {
        child.kill('SIGKILL');
      }
    } finally {
      data.remove();
    }
  });
});
