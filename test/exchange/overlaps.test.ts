import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, runCommand, serveDataDir } from '../helpers/imports.ts';

/**
 * One organization from two sources of one import (a statewide network combining its members'
 * feeds): the same id, or the same identifier (an EIN) under another id. Each overlap is reported,
 * the first source listed is served and the other left out, never merged; --strict refuses.
 */
describe('organizations that two sources hold', () => {
  it('serves the one of the first source listed when both have the same id, says so for each, and --strict refuses', async () => {
    const second = temporaryDirectory();
    const data = temporaryDirectory();
    try {
      // A second feed of the same organizations (its own file of them only), one renamed.
      const folder = join(second.path, 'county-feed');
      mkdirSync(folder);
      const organizations = join(folder, 'organizations.csv');
      writeFileSync(organizations, readFileSync(join(NATIVE_EXAMPLE, 'organizations.csv'), 'utf8').replace('Westside Pantry', 'Westside Pantry (county copy)'));
      const run = await runCommand('import', data.path, [NATIVE_EXAMPLE, folder]);
      assert.equal(run.code, 0, run.text);
      assert.match(run.text, /warning: 5 × organization in two sources \(the first listed is served\)/);
      assert.match(run.text, /organization SPR-002 is also in native files \(organizations\) \(first at .*native\/organizations\.csv:3\), listed first: that one is served, this one is left out \(native files \(organizations\)\)/);
      const { app, stores } = await serveDataDir(data.path);
      try {
        const lines = (await app.inject({ url: `${API}/organizations?format=ndjson&full=true` })).body.split('\n').filter((line) => line !== '');
        const westside = lines.map((line) => JSON.parse(line)).find((organization) => organization.external_identifier === 'SPR-002');
        assert.equal(westside.name, 'Westside Pantry');
        assert.deepEqual({ ...westside.provenance, read_at: undefined }, { source: 'native files', location: 'organizations', source_id: 'SPR-002', read_at: undefined });
        assert.equal(JSON.parse((await app.inject({ url: `${API}/organizations` })).body).total_items, 4);
      } finally {
        await app.close();
        await stores.close();
      }
      const strict = await runCommand('import', temporaryDirectory().path, [NATIVE_EXAMPLE, folder], { strict: true });
      assert.equal(strict.code, 1);
      assert.match(strict.text, /Not publishable/);
    } finally {
      second.remove();
      data.remove();
    }
  });

  it('serves the first source\'s organization when another source has one with the same EIN under another id', async () => {
    const second = temporaryDirectory();
    const data = temporaryDirectory();
    try {
      const folder = join(second.path, 'member-211');
      mkdirSync(folder);
      writeFileSync(join(folder, 'organizations.csv'), 'id,name,description\r\nf2a4c8e0-3b1d-4c5e-9f7a-1b2c3d4e5f60,Springfield Community Food Bank,Food for the county.\r\n2c9d7e1a-8b4f-4a6c-b3d2-5e6f7a8b9c0d,Lakeside Youth Club,After-school programs.\r\n');
      writeFileSync(join(folder, 'organization_identifiers.csv'), 'id,organization_id,identifier_scheme,identifier_type,identifier\r\n7d1e2f3a-4b5c-4d6e-8f9a-0b1c2d3e4f5a,f2a4c8e0-3b1d-4c5e-9f7a-1b2c3d4e5f60,us-ein,EIN,123456789\r\n');
      const run = await runCommand('import', data.path, [NATIVE_EXAMPLE, folder]);
      assert.equal(run.code, 0, run.text);
      assert.match(
        run.text,
        /organization f2a4c8e0-3b1d-4c5e-9f7a-1b2c3d4e5f60 has identifier US-EIN 123456789, as organization SPR-001 of native files \(organizations\), listed first: that one is served, this one is left out \(HSDS package \(organizations\)\)/,
      );
      const { app, stores } = await serveDataDir(data.path);
      try {
        const names = JSON.parse((await app.inject({ url: `${API}/organizations` })).body).contents.map((organization: { name: string }) => organization.name);
        assert.ok(names.includes('Springfield Food Bank') && names.includes('Lakeside Youth Club'), names.join(', '));
        assert.ok(!names.includes('Springfield Community Food Bank'), names.join(', '));
        const lakeside = JSON.parse((await app.inject({ url: `${API}/organizations/2c9d7e1a-8b4f-4a6c-b3d2-5e6f7a8b9c0d` })).body);
        assert.deepEqual({ ...lakeside.provenance, read_at: undefined }, { source: 'HSDS package', location: 'organizations', source_id: '2c9d7e1a-8b4f-4a6c-b3d2-5e6f7a8b9c0d', read_at: undefined });
      } finally {
        await app.close();
        await stores.close();
      }
    } finally {
      second.remove();
      data.remove();
    }
  });
});
