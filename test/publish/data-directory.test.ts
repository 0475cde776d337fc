import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { runServe } from '../../src/cli/serve.ts';
import { runUse } from '../../src/cli/use.ts';
import { loadServeConfig, loadUseConfig } from '../../src/config.ts';
import { inspectDataDirectory, POINTER_FILE, readPointer, snapshotsPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { STORE_FORMAT } from '../../src/store/tables.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';
import { snapshotOrganizations } from '../helpers/snapshot-documents.ts';

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none' }, timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * `serve` or `use` as the command runs it, in this process: what it returns and writes. For a data
 * directory it must refuse (were it to serve instead, the test would time out). What the command adds
 * around these, printing (with control characters escaped) and the exit code, the cases through `cli` cover.
 */
async function inProcess(command: 'serve' | 'use', ...args: string[]) {
  const stderr: string[] = [];
  const stdout: string[] = [];
  const code =
    command === 'serve'
      ? await runServe(loadServeConfig(args, {}), (line) => stderr.push(line))
      : await runUse(loadUseConfig(args, {}), (line) => stderr.push(line), (line) => stdout.push(line));
  return { code, stdout: stdout.map((line) => `${line}\n`).join(''), stderr: stderr.join('\n') };
}

/** A native dataset of `count` organizations named after `label`. */
/** `count` organizations named after `label`; each with a description of `describedIn` characters, all different, when given. */
function datasetNamed(directory: string, label: string, count: number, describedIn = 0): string {
  const description = (index: number) => (describedIn === 0 ? '' : createHash('sha512').update(String(index)).digest('hex').repeat(Math.ceil(describedIn / 128)).slice(0, describedIn));
  const rows = Array.from({ length: count }, (_, index) => `${label}-${index},${label} Organization ${index},published,,${description(index)},,,,,,,,`);
  return nativeSourceDir(directory, {
    'organizations.csv': `id,name,status,alternate_name,description,email,website,tax_status,tax_id,year_incorporated,legal_status,uri,parent_id\n${rows.join('\n')}\n`,
    'organization_tags.csv': 'organization_id,taxonomy,term_code\n',
    'organization_identifiers.csv': 'organization_id,scheme,type,identifier\n',
  });
}

/** Overwrites `length` bytes at `offset` of a file with `byte`, in place. */
function overwrite(file: string, offset: number, length: number, byte = 0): void {
  const descriptor = openSync(file, 'r+');
  try {
    writeSync(descriptor, Buffer.alloc(length, byte), 0, length, offset);
  } finally {
    closeSync(descriptor);
  }
}

const listing = (dataDir: string) => readdirSync(snapshotsPath(dataDir)).sort();

describe('a data directory whose pointer names no snapshot', () => {
  const data = temporaryDirectory();
  const sources = temporaryDirectory();
  let older = '';
  let newer = '';
  before(async () => {
    assert.equal((await runCommand('import', data.path, [datasetNamed(join(sources.path, 'a'), 'Alpha', 3)])).code, 0);
    older = readPointer(data.path)!;
    assert.equal((await runCommand('import', data.path, [datasetNamed(join(sources.path, 'b'), 'Bravo', 5)])).code, 0);
    newer = readPointer(data.path)!;
    assert.notEqual(older, newer);
  });
  after(() => {
    data.remove();
    sources.remove();
  });

  const states: [string, () => void, RegExp][] = [
    ['a missing pointer', () => rmSync(join(data.path, POINTER_FILE)), /current is missing/],
    ['an empty pointer', () => writeFileSync(join(data.path, POINTER_FILE), ''), /current does not name a snapshot \(it holds ""\)/],
    ['a pointer out of the directory', () => writeFileSync(join(data.path, POINTER_FILE), '../../../../etc/passwd\n'), /current does not name a snapshot \(it holds "\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd\\n"\)/],
    ['a pointer holding terminal escapes', () => writeFileSync(join(data.path, POINTER_FILE), '\u001b]0;pwned\u0007\u009b31m'), /current does not name a snapshot \(it holds "\\u001b\]0;pwned\\u0007\\x9b31m"\)/],
    ['a pointer to a deleted snapshot', () => writeFileSync(join(data.path, POINTER_FILE), '20200101T000000Z-0000000000000000.sqlite\n'), /names 20200101T000000Z-0000000000000000\.sqlite, which is not in/],
  ];
  for (const [label, damage, problem] of states) {
    // The pointer holding terminal escapes goes through the command's own process: its printing escapes them.
    const run = label.includes('escapes') ? async (...args: string[]) => cli(...args) : (command: 'serve' | 'use', ...args: string[]) => inProcess(command, ...args);
    it(`with ${label}: serve refuses, deletes nothing, and names the newest intact snapshot and the command to serve it`, { timeout: 30_000 }, async () => {
      const before = listing(data.path);
      damage();
      const serve = await run('serve', '--data-dir', data.path, '--port', '0', '--host', '127.0.0.1');
      assert.equal(serve.code, 1, serve.stderr);
      assert.match(serve.stderr, problem);
      assert.match(serve.stderr, /Nothing was changed/);
      assert.ok(serve.stderr.includes(`The newest intact snapshot is ${newer} (dataset `), serve.stderr);
      assert.ok(serve.stderr.includes(`hsds-org-api use --data-dir ${data.path} ${newer}`), serve.stderr);
      assert.doesNotMatch(serve.stderr, /importing the default dataset|\n\s+at /);
      assert.deepEqual(listing(data.path), before, 'no file was removed or added');

      const use = await run('use', '--data-dir', data.path, newer);
      assert.equal(use.code, 0, use.stderr);
      assert.match(use.stdout, /^Now live: .* 5 organizations\)\. /);
      assert.equal(readPointer(data.path), newer);
    });
  }

  it('tells an empty directory (or one holding only what a killed first import left) from one that lost its pointer', () => {
    const empty = temporaryDirectory();
    try {
      assert.deepEqual(inspectDataDirectory(join(empty.path, 'absent')), { kind: 'empty' });
      mkdirSync(snapshotsPath(empty.path));
      writeFileSync(join(snapshotsPath(empty.path), '123-456.building'), 'partial');
      writeFileSync(join(empty.path, 'import.lock'), '999999999');
      assert.deepEqual(inspectDataDirectory(empty.path), { kind: 'empty' });
      writeFileSync(join(empty.path, POINTER_FILE), '');
      assert.equal(inspectDataDirectory(empty.path).kind, 'broken');
      rmSync(join(empty.path, POINTER_FILE));
      copyFileSync(join(snapshotsPath(data.path), newer), join(snapshotsPath(empty.path), newer));
      assert.equal(inspectDataDirectory(empty.path).kind, 'broken');
    } finally {
      empty.remove();
    }
  });

  it('an import into it keeps the newest snapshot beside the new one', async () => {
    rmSync(join(data.path, POINTER_FILE));
    const run = await runCommand('import', data.path, [datasetNamed(join(sources.path, 'c'), 'Charlie', 7)]);
    assert.equal(run.code, 0, run.text);
    const live = readPointer(data.path)!;
    assert.deepEqual(listing(data.path), [newer, `${newer}.sha256`, live, `${live}.sha256`].sort(), `the oldest, ${older}, removed by this successful publish`);
  });

  it('use refuses a name that is not a snapshot there, and lists those that are', () => {
    const run = cli('use', '--data-dir', data.path, '/etc/passwd');
    assert.equal(run.code, 1);
    assert.match(run.stderr, /is not a snapshot of .*; it holds .*\.sqlite/);
    const missing = cli('use', '--data-dir', data.path, '20200101T000000Z-0000000000000000.sqlite');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /is not a snapshot of/);
  });
});

describe('snapshot checksums', () => {
  const data = temporaryDirectory();
  const sources = temporaryDirectory();
  let first = '';
  before(async () => {
    assert.equal((await runCommand('import', data.path, [datasetNamed(join(sources.path, 'a'), 'Alpha', 3)])).code, 0);
    first = readPointer(data.path)!;
  });
  after(() => {
    data.remove();
    sources.remove();
  });

  it('are written at publish, in the form sha256sum -c reads', () => {
    const checksum = readFileSync(join(snapshotsPath(data.path), `${first}.sha256`), 'utf8');
    assert.match(checksum, new RegExp(`^[0-9a-f]{64}  ${first.replace(/\./g, '\\.')}\n$`));
    const check = spawnSync('sha256sum', ['-c', `${first}.sha256`], { cwd: snapshotsPath(data.path), encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });

  /** Publishes a second dataset, damages its snapshot with `damage`, and returns its path. */
  async function damagedSecond(label: string, damage: (file: string) => void): Promise<string> {
    const copy = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', copy.path, [datasetNamed(join(sources.path, label), label, 40)])).code, 0);
      const name = readPointer(copy.path)!;
      for (const file of [name, `${name}.sha256`]) copyFileSync(join(snapshotsPath(copy.path), file), join(snapshotsPath(data.path), file));
      const path = join(snapshotsPath(data.path), name);
      damage(path);
      return path;
    } finally {
      copy.remove();
    }
  }

  const damages: [string, (file: string) => void, RegExp][] = [
    ['two bytes changed inside an organization\'s JSON', (file) => {
      const content = readFileSync(file);
      const at = content.indexOf('Organization 7');
      assert.ok(at > 0);
      overwrite(file, at, 2, 0x58);
    }, /is damaged: its content does not match the checksum/],
    ['a file cut short', (file) => writeFileSync(file, readFileSync(file).subarray(0, statSync(file).size / 2)), /is damaged/],
    ['a range zeroed mid-file', (file) => overwrite(file, Math.floor(statSync(file).size / 2), 16_384), /is damaged/],
    ['its checksum file lost', (file) => rmSync(`${file}.sha256`), /has no checksum file/],
  ];

  for (const [label, damage, reason] of damages) {
    // The first case as the command runs in a process of its own, the others in this one.
    const run = label === damages[0]![0] ? async (...args: string[]) => cli(...args) : (command: 'serve' | 'use', ...args: string[]) => inProcess(command, ...args);
    it(`refuse to serve a live snapshot with ${label}, naming it, why, and the intact one before it`, { timeout: 30_000 }, async () => {
      const path = await damagedSecond(label.replace(/\W+/g, '-'), damage);
      const name = path.slice(path.lastIndexOf('/') + 1);
      writeFileSync(join(data.path, POINTER_FILE), `${name}\n`);
      try {
        const serve = await run('serve', '--data-dir', data.path, '--port', '0', '--host', '127.0.0.1');
        assert.equal(serve.code, 1, serve.stderr);
        assert.ok(serve.stderr.includes(`Error: the live snapshot ${path} `), serve.stderr);
        assert.match(serve.stderr, reason);
        assert.ok(serve.stderr.includes(`The newest intact snapshot is ${first}`), serve.stderr);
        assert.doesNotMatch(serve.stderr, /\n\s+at /, 'no stack trace');
        const use = await run('use', '--data-dir', data.path, name);
        assert.equal(use.code, 1);
        assert.match(use.stderr, reason);
      } finally {
        writeFileSync(join(data.path, POINTER_FILE), `${first}\n`);
        rmSync(path, { force: true });
        rmSync(`${path}.sha256`, { force: true });
      }
    });
  }

  it('refuse to serve a live snapshot of another format (published by another version), checksum intact, saying so and what to do', { timeout: 30_000 }, async () => {
    const path = await damagedSecond('Format', (file) => {
      const db = new DatabaseSync(file);
      db.prepare("UPDATE dataset SET value = '1' WHERE key = 'format'").run();
      db.close();
      const digest = createHash('sha256').update(readFileSync(file)).digest('hex');
      writeFileSync(`${file}.sha256`, `${digest}  ${basename(file)}\n`);
    });
    const name = basename(path);
    writeFileSync(join(data.path, POINTER_FILE), `${name}\n`);
    try {
      const serve = await inProcess('serve', '--data-dir', data.path, '--port', '0', '--host', '127.0.0.1');
      assert.equal(serve.code, 1, serve.stderr);
      assert.ok(serve.stderr.includes(`Error: the live snapshot ${path} is of snapshot format 1, not ${STORE_FORMAT} (published by another version): import the data again`), serve.stderr);
      assert.ok(serve.stderr.includes(`The newest intact snapshot is ${first}`), serve.stderr);
      assert.throws(() => new SqliteStore(path), new RegExp(`is of snapshot format 1, not ${STORE_FORMAT}`));
    } finally {
      writeFileSync(join(data.path, POINTER_FILE), `${first}\n`);
      rmSync(path, { force: true });
      rmSync(`${path}.sha256`, { force: true });
    }
  });

  it('keep a running server on its snapshot when a newer one is damaged, and say so in /readyz', async () => {
    const { app, stores } = await serveDataDir(data.path);
    try {
      const path = await damagedSecond('Late', (file) => overwrite(file, Math.floor(statSync(file).size / 2), 4096, 0xff));
      const name = path.slice(path.lastIndexOf('/') + 1);
      writeFileSync(join(data.path, POINTER_FILE), `${name}\n`);
      await stores.refresh();
      assert.equal((await getJson(app, `${API}/organizations`)).body.total_items, 3, 'still the first dataset');
      const ready = await app.inject('/readyz');
      assert.equal(ready.statusCode, 200);
      assert.match(ready.json().warning, new RegExp(`newer snapshot ${name.replace(/\./g, '\\.')} refused`));
      assert.doesNotMatch(ready.body, /\/tmp\//, 'no server path in a public answer');

      // Repaired by a new publish: followed at once.
      rmSync(path);
      rmSync(`${path}.sha256`);
      writeFileSync(join(data.path, POINTER_FILE), `${first}\n`);
      assert.equal((await runCommand('import', data.path, [datasetNamed(join(sources.path, 'fixed'), 'Fixed', 11)])).code, 0);
      await stores.refresh();
      assert.equal((await getJson(app, `${API}/organizations`)).body.total_items, 11);
      assert.equal((await app.inject('/readyz')).json().warning, undefined);
    } finally {
      await app.close();
    }
  });

  it('answer 503 and report not ready when the file served is damaged after it was opened', async () => {
    const big = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', big.path, [datasetNamed(join(sources.path, 'big'), 'Big', 3000)])).code, 0);
      const { app } = await serveDataDir(big.path);
      try {
        const file = join(snapshotsPath(big.path), readPointer(big.path)!);
        // Everything past the first pages (schema and dataset table, already read) turns to zeros.
        overwrite(file, 64 * 1024, statSync(file).size - 64 * 1024);
        const statuses = new Set<number>();
        for (const page of [1, 40, 80, 120, 149]) statuses.add((await app.inject(`${API}/organizations?page=${page}`)).statusCode);
        assert.ok(statuses.has(503), `statuses: ${[...statuses]}`);
        assert.ok(!statuses.has(500), `statuses: ${[...statuses]}`);
        const ready = await app.inject('/readyz');
        assert.equal(ready.statusCode, 503);
        assert.match(ready.json().reason, /is damaged/);
      } finally {
        await app.close();
      }
    } finally {
      big.remove();
    }
  });
});

describe('bytes altered in the live snapshot after it was verified', () => {
  it('are never served: the read that meets them answers 503, /readyz fails naming the snapshot, and a metric says so', async () => {
    const data = temporaryDirectory();
    const sources = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', data.path, [datasetNamed(sources.path, 'Kept', 300)])).code, 0);
      const { app } = await serveDataDir(data.path);
      try {
        const name = readPointer(data.path)!;
        const file = join(snapshotsPath(data.path), name);
        // Read from the file, not through the server, whose page cache would then hold it as it was.
        const db = new DatabaseSync(file, { readOnly: true });
        const organization = JSON.parse(snapshotOrganizations(db)[199]!.item) as { id: string; name: string };
        db.close();
        assert.equal((await app.inject(`${API}/organizations?per_page=1&page=1`)).statusCode, 200);
        // Two bytes of the name, wherever the snapshot holds it as JSON (the list form, which the full document is made with); nothing else.
        const bytes = readFileSync(file);
        const was = Buffer.from(`"${organization!.name}"`);
        const altered = Buffer.from(`"${organization!.name.replace('Kept', 'Kapt').replace('Organization', 'Orgbnization')}"`);
        assert.equal(was.length, altered.length, 'the same length: only bytes change');
        let at = bytes.indexOf(was);
        const places: number[] = [];
        while (at !== -1) {
          places.push(at);
          at = bytes.indexOf(was, at + 1);
        }
        assert.equal(places.length, 1, 'the list form alone');
        const descriptor = openSync(file, 'r+');
        for (const place of places) writeSync(descriptor, altered, 0, altered.length, place);
        closeSync(descriptor);

        const byId = await app.inject(`${API}/organizations/${organization!.id}`);
        assert.equal(byId.statusCode, 503);
        assert.doesNotMatch(byId.body, /Kapt|Orgbnization/);
        // Not the page asked for above, which the response cache holds as it was read, verified.
        const listed = await app.inject(`${API}/organizations?per_page=2&page=100`);
        assert.equal(listed.statusCode, 503);
        const ready = await app.inject('/readyz');
        assert.equal(ready.statusCode, 503);
        assert.equal(ready.json().reason, `snapshot ${name} is damaged (see the server log)`);
        assert.match((await app.inject('/metrics')).body, /^hsds_dataset_damaged 1$/m);
      } finally {
        await app.close();
      }
    } finally {
      data.remove();
      sources.remove();
    }
  });
});

describe('the import lock', () => {
  it('is taken over when its process id now belongs to another process, and otherwise names the file, the process and how to clear it', async () => {
    const data = temporaryDirectory();
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
      const lock = join(data.path, 'import.lock');
      const stat = readFileSync(`/proc/${sleeper.pid}/stat`, 'utf8');
      const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      writeFileSync(lock, `${sleeper.pid} ${started}`);
      const busy = cli('import', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.equal(busy.code, 1);
      assert.ok(busy.stderr.includes(`another import (process ${sleeper.pid}) holds the lock ${lock}`), busy.stderr);
      assert.match(busy.stderr, /the lock is stale: remove .*import\.lock and try again\. Nothing was published; the live dataset is unchanged\./);
      writeFileSync(lock, `${sleeper.pid} 1`);
      const reused = cli('import', '--data-dir', data.path, NATIVE_EXAMPLE);
      assert.equal(reused.code, 0, reused.stderr);
    } finally {
      sleeper.kill();
      data.remove();
    }
  });
});

/** Runs a shell script as root of a new user and mount namespace, where it may mount a small tmpfs. */
function inMountNamespace(script: string, env: Record<string, string>) {
  return spawnSync('unshare', ['--map-root-user', '--mount', 'sh', '-c', script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
}

describe('storage faults', () => {
  it('a full disk and a read-only data directory: one line naming the path, and the live dataset unchanged', () => {
    const scratch = temporaryDirectory();
    try {
      const volume = join(scratch.path, 'volume');
      mkdirSync(volume);
      // Room enough at first sight (see RoomForSnapshot: half the 15 MB foreseen), not for its 30 MB of descriptions.
      const large = datasetNamed(join(scratch.path, 'large'), 'Large', 20_000, 1500);
      const script = [
        'set -u',
        'mount -t tmpfs -o size=8m tmpfs "$VOLUME"',
        '"$NODE" "$CLI" import --progress none --data-dir "$VOLUME/data" "$SMALL" 2>&1; echo "exit=$?"',
        'cat "$VOLUME/data/current"',
        'echo ---full',
        '"$NODE" "$CLI" import --progress none --data-dir "$VOLUME/data" "$LARGE" 2>&1; echo "exit=$?"',
        'cat "$VOLUME/data/current"; ls "$VOLUME/data/snapshots"',
        'echo ---read-only',
        'mount -o remount,ro "$VOLUME"',
        '"$NODE" "$CLI" import --progress none --data-dir "$VOLUME/data" "$LARGE" 2>&1; echo "exit=$?"',
        'cat "$VOLUME/data/current"',
      ].join('\n');
      const run = inMountNamespace(script, { VOLUME: volume, NODE: process.execPath, CLI, SMALL: NATIVE_EXAMPLE, LARGE: large });
      assert.equal(run.status, 0, run.stderr);
      const [published, full, readOnly] = run.stdout.split(/---full|---read-only/);
      assert.match(published!, /Published dataset/);
      const live = /exit=0\n(\S+)/.exec(published!)![1]!;
      assert.match(full!, /Error: .*: the disk is full.*\. Nothing was published; the live dataset is unchanged\.\nexit=1\n/);
      assert.doesNotMatch(full!, /\n\s+at /);
      assert.ok(full!.includes(`exit=1\n${live}\n${live}\n${live}.sha256\n`), `${full}: live unchanged, the partial build removed`);
      assert.match(readOnly!, new RegExp(`Error: ${volume}/data/\\S+: the file system is read-only\\. Nothing was published; the live dataset is unchanged\\.\\nexit=1\\n${live}`));
    } finally {
      scratch.remove();
    }
  });
});
