import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { NATIVE_EXAMPLE } from './helpers/imports.ts';
import { postgresSuite, temporaryDatabase } from './helpers/postgres.ts';
import { freePort, waitFor } from './helpers/wait.ts';

const BIN = new URL('../bin/hsds-org-api.js', import.meta.url).pathname;

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none', DATABASE_URL: '' } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}


describe('the hsds-org-api command on PostgreSQL', postgresSuite, () => {
  let database: Awaited<ReturnType<typeof temporaryDatabase>>;
  before(async () => {
    database = await temporaryDatabase();
  });
  after(() => database.drop());

  it('refuses to import into a database without the migrations, then migrates it once', () => {
    const refused = cli('import', '--database-url', database.url, NATIVE_EXAMPLE);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^Error: the database lacks migration 0001_generations: run `hsds-org-api migrate` first/m);
    assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace');
    const migrated = cli('migrate', '--database-url', database.url);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /^Applied 1 migration: 0001_generations\.$/m);
    assert.match(cli('migrate', '--database-url', database.url).stdout, /up to date/);
  });

  it('imports, and serves what it imported with /readyz ready', async () => {
    const imported = cli('import', '--database-url', database.url, NATIVE_EXAMPLE);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /^Published dataset [0-9a-f]{16}: 4 organizations/);
    const port = await freePort();
    const server = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn'], {
      env: { ...process.env, DATABASE_URL: database.url },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => server.once('exit', resolve));
    try {
      const origin = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${origin}/readyz`).catch(() => undefined))?.status === 200, 15_000, 'the server');
      const list = await (await fetch(`${origin}/api/hsds/v3/organizations`)).json();
      assert.equal(list.total_items, 4, "the published ones");
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  });

  it('refuses to serve (and so to import the default dataset over) a database whose live pointer was cleared', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT generation FROM hsds.live');
      await client.query('UPDATE hsds.live SET generation = NULL');
      const serve = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1'], { encoding: 'utf8', env: { ...process.env, PROGRESS: 'none', DATABASE_URL: database.url }, timeout: 60_000 });
      assert.equal(serve.status, 1, serve.stderr);
      assert.match(serve.stderr, new RegExp(`hsds.live names no generation, though generation ${rows[0].generation} .* Nothing was changed\\. To serve it: UPDATE hsds.live SET generation = ${rows[0].generation};`));
      assert.doesNotMatch(serve.stderr, /importing the default dataset/);
      assert.equal((await client.query('SELECT count(*)::int AS n FROM hsds.generations')).rows[0].n, 1);
    } finally {
      await client.end();
    }
  });
});
