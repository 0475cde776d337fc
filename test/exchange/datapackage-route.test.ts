import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { unzipSync } from 'fflate';
import { buildApp } from '../../src/http/app.ts';
import { LiveSqliteStores } from '../../src/store/sqlite/live.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand } from '../helpers/imports.ts';

describe('GET /datapackage.zip', () => {
  it('is made once per dataset version, sent with the version\'s validators, and made anew after a publish', async () => {
    const data = temporaryDirectory();
    const packages = temporaryDirectory();
    const source = temporaryDirectory();
    try {
      assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
      const stores = await LiveSqliteStores.open(data.path, { info: () => {}, error: () => {} });
      const app = await buildApp({ stores, logLevel: 'silent', packagesDirectory: packages.path });
      try {
        const root = JSON.parse((await app.inject({ url: `${API}/` })).body);
        assert.equal(root.links.datapackage, `http://localhost${API}/datapackage.zip`);
        const first = await app.inject({ url: `${API}/datapackage.zip`, headers: { 'accept-encoding': 'br, gzip' } });
        assert.equal(first.statusCode, 200);
        assert.equal(first.headers['content-encoding'], undefined, 'a ZIP is sent as it is');
        assert.equal(first.headers['content-disposition'], `attachment; filename="hsds-${root.dataset.version}.zip"`);
        assert.match(String(first.headers.etag), new RegExp(`^"${root.dataset.version}\\.`));
        assert.equal(first.headers['cache-control'], 'public, max-age=300');
        assert.deepEqual(Object.keys(unzipSync(new Uint8Array(first.rawPayload))), ['datapackage.json', 'taxonomies.csv', 'taxonomy_terms.csv', 'organizations.csv', 'organization_identifiers.csv', 'urls.csv', 'attributes.csv']);
        assert.deepEqual(readdirSync(packages.path), [`${root.dataset.version}.zip`]);
        const made = statSync(join(packages.path, `${root.dataset.version}.zip`)).mtimeMs;

        const again = await app.inject({ url: `${API}/datapackage.zip` });
        assert.ok(again.rawPayload.equals(first.rawPayload));
        assert.equal(statSync(join(packages.path, `${root.dataset.version}.zip`)).mtimeMs, made, 'sent as made, not made again');
        const head = await app.inject({ method: 'HEAD', url: `${API}/datapackage.zip` });
        assert.equal(head.statusCode, 200);
        assert.equal(head.headers['content-length'], String(first.rawPayload.length));
        const held = await app.inject({ url: `${API}/datapackage.zip`, headers: { 'if-none-match': String(first.headers.etag) } });
        assert.equal(held.statusCode, 304);

        // A new publish (one organization renamed): its own package; the old one is removed once the new one is made.
        nativeSourceDir(source.path);
        const organizations = join(source.path, 'organizations.csv');
        writeFileSync(organizations, readFileSync(organizations, 'utf8').replace('Westside Pantry', 'Westside Community Pantry'));
        assert.equal((await runCommand('import', data.path, [source.path])).code, 0);
        await stores.refresh();
        let newRoot = JSON.parse((await app.inject({ url: `${API}/` })).body);
        for (let tries = 0; newRoot.dataset.version === root.dataset.version && tries < 50; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          newRoot = JSON.parse((await app.inject({ url: `${API}/` })).body);
        }
        assert.notEqual(newRoot.dataset.version, root.dataset.version);
        const next = await app.inject({ url: `${API}/datapackage.zip` });
        assert.equal(next.statusCode, 200);
        assert.notEqual(next.headers.etag, first.headers.etag);
        assert.deepEqual(readdirSync(packages.path), [`${newRoot.dataset.version}.zip`]);
      } finally {
        await app.close();
        await stores.close();
      }
    } finally {
      data.remove();
      packages.remove();
      source.remove();
    }
  });
});
