import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { currentSnapshotPath, LOCK_FILE, snapshotsPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

/** Enough organizations that an import is still building when it is killed. */
function largeSource(directory: string): string {
  const rows = Array.from({ length: 150_000 }, (_, index) => `BIG-${index},Big Organization ${index},published,,A description long enough to take some time to write.,,,,,,,,`);
  nativeSourceDir(directory);
  writeFileSync(join(directory, 'organizations.csv'), `id,name,status,alternate_name,description,email,website,tax_status,tax_id,year_incorporated,legal_status,uri,parent_id\n${rows.join('\n')}\n`);
  writeFileSync(join(directory, 'organization_tags.csv'), 'organization_id,taxonomy,term_code\n');
  writeFileSync(join(directory, 'organization_identifiers.csv'), 'organization_id,scheme,type,identifier\n');
  return directory;
}

describe('an import killed with SIGKILL', () => {
  it('leaves the live dataset served and untouched, and the next import cleans up and works', async () => {
    const data = temporaryDirectory();
    const big = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
      const live = currentSnapshotPath(data.path);
      const { app, stores } = await serveDataDir(data.path);
      const importer = spawn(process.execPath, [CLI, 'import', '--progress', 'lines', '--data-dir', data.path, largeSource(big.path)], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise((resolve) => importer.on('exit', resolve));
      // Killed as it starts writing the snapshot: the moment it reports having read its sources.
      let output = '';
      await new Promise<void>((resolve) => {
        const watch = (chunk: Buffer) => {
          output += chunk.toString();
          if (/^reading sources: /m.test(output)) resolve();
        };
        importer.stdout!.on('data', watch);
        importer.stderr!.on('data', watch);
        importer.on('exit', () => resolve());
      });
      const building = readdirSync(snapshotsPath(data.path)).filter((name) => name.endsWith('.building'));
      importer.kill('SIGKILL');
      await exited;
      assert.match(output, /^reading sources: /m, 'the import read its sources');
      assert.doesNotMatch(output, /Published/, 'the import had not published');
      assert.equal(building.length, 1, 'the import was writing its snapshot');

      assert.equal(currentSnapshotPath(data.path), live);
      assert.ok(existsSync(join(data.path, LOCK_FILE)), 'the killed import left its lock');
      await stores.refresh();
      assert.equal((await getJson(app, `${API}/organizations`)).body.total_items, 4);

      const next = await runCommand('import', data.path, [big.path]);
      assert.equal(next.code, 0, next.text);
      const files = readdirSync(snapshotsPath(data.path));
      const snapshots = files.filter((name) => name.endsWith('.sqlite'));
      assert.deepEqual(files.filter((name) => !name.endsWith('.sqlite')).sort(), snapshots.map((name) => `${name}.sha256`).sort(), 'only snapshots and their checksums are left');
      assert.ok(!existsSync(join(data.path, LOCK_FILE)));
      await stores.refresh();
      assert.equal((await getJson(app, `${API}/organizations`)).body.total_items, 150_000);
      await app.close();
    } finally {
      data.remove();
      big.remove();
    }
  });
});
