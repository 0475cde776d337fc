import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { organizationId } from '../../src/hsds/ids.ts';
import { currentSnapshotPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { API, getJson, temporaryDirectory } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';
import type { FastifyInstance } from 'fastify';

const NDJSON_EXAMPLE = new URL('../fixtures/native-ndjson/', import.meta.url).pathname;
const HSDS_CONSISTENT = new URL('../fixtures/hsds-example-consistent/', import.meta.url).pathname;

/** Every response a client could fetch from a small dataset: root, every list page and every object. */
async function everyResponse(app: FastifyInstance): Promise<Map<string, string>> {
  const responses = new Map<string, string>();
  const root = await getJson(app, `${API}/`);
  responses.set('/', root.text);
  for (const list of ['organizations', 'taxonomies', 'taxonomy_terms']) {
    const page = await getJson(app, `${API}/${list}?per_page=100`);
    responses.set(list, page.text);
    for (const item of page.body.contents) responses.set(`${list}/${item.id}`, (await getJson(app, `${API}/${list}/${item.id}`)).text);
  }
  return responses;
}

describe('importing the native format', () => {
  it('publishes a CSV directory: published organizations with tags, identifiers and parents; unpublished nowhere', async () => {
    const directory = temporaryDirectory();
    try {
      const run = await runCommand('import', directory.path, [NATIVE_EXAMPLE]);
      assert.equal(run.code, 0, run.text);
      assert.match(run.text, /Published dataset [0-9a-f]{16}: 4 organizations \(1 unpublished left out\), 1 taxonomy, 5 taxonomy terms/);
      const { app } = await serveDataDir(directory.path);
      const list = await getJson(app, `${API}/organizations`);
      assertHsds('organizationList', list.body);
      assert.deepEqual(
        list.body.contents.map((organization: any) => organization.external_identifier),
        ['SPR-004', 'SPR-001', 'SPR-003', 'SPR-002'],
      );
      assert.equal((await getJson(app, `${API}/organizations/${organizationId('SPR-005')}`)).status, 404);
      const pantry = await getJson(app, `${API}/organizations/${organizationId('SPR-002')}`);
      assertHsds('organization', pantry.body);
      assert.equal(pantry.body.parent_organization_id, organizationId('SPR-001'));
      assert.deepEqual(pantry.body.classifications.map((tag: any) => `${tag.taxonomy}:${tag.code}`), ['city_services:food.pantry']);
      const bank = await getJson(app, `${API}/organizations/${organizationId('SPR-001')}`);
      assert.deepEqual(bank.body.organization_identifiers.map((identifier: any) => identifier.identifier), ['123456789']);
      assert.equal(bank.body.year_incorporated, 1984);
      const root = await getJson(app, `${API}/`);
      assert.equal(root.body.dataset.organizations, 4);
      assert.match(root.body.dataset.version, /^[0-9a-f]{16}$/);
      assert.ok(!Number.isNaN(Date.parse(root.body.dataset.published_at)));
      await app.close();
    } finally {
      directory.remove();
    }
  });

  it('gives the same dataset, byte for byte, from NDJSON as from CSV', async () => {
    const directory = temporaryDirectory();
    try {
      const fromCsv = await runCommand('import', directory.path, [NATIVE_EXAMPLE]);
      const fromNdjson = await runCommand('import', directory.path, [NDJSON_EXAMPLE]);
      assert.equal(fromNdjson.code, 0, fromNdjson.text);
      assert.match(fromNdjson.text, /nchanged/, 'the NDJSON import found nothing to change');
      assert.equal(fromCsv.text.match(/dataset ([0-9a-f]{16})/)![1], fromNdjson.text.match(/dataset ([0-9a-f]{16})/)![1]);
    } finally {
      directory.remove();
    }
  });

  it('importing the same sources twice gives byte-identical responses', async () => {
    const directory = temporaryDirectory();
    try {
      await runCommand('import', directory.path, [NATIVE_EXAMPLE]);
      const { app, stores } = await serveDataDir(directory.path);
      const before = await everyResponse(app);
      const again = await runCommand('import', directory.path, [NATIVE_EXAMPLE]);
      assert.equal(again.code, 0);
      assert.match(again.text, /^Unchanged: dataset [0-9a-f]{16} \(published .*\) is already live/m);
      await stores.refresh();
      assert.deepEqual(await everyResponse(app), before);
      await app.close();
    } finally {
      directory.remove();
    }
  });

  it('takes a status change on the next import: the unpublished organization leaves every list, count and lookup', async () => {
    const directory = temporaryDirectory();
    const sources = temporaryDirectory();
    try {
      await runCommand('import', directory.path, [NATIVE_EXAMPLE]);
      const { app, stores } = await serveDataDir(directory.path);
      const shelter = `${API}/organizations/${organizationId('SPR-004')}`;
      assert.equal((await getJson(app, shelter)).status, 200);
      const organizations = (await import('node:fs')).readFileSync(join(NATIVE_EXAMPLE, 'organizations.csv'), 'utf8');
      nativeSourceDir(sources.path, { 'organizations.csv': organizations.replace('SPR-004,Harbor Light Shelter,published', 'SPR-004,Harbor Light Shelter,unpublished') });
      const run = await runCommand('import', directory.path, [sources.path]);
      assert.equal(run.code, 0, run.text);
      await stores.refresh();
      assert.equal((await getJson(app, shelter)).status, 404);
      const list = await getJson(app, `${API}/organizations`);
      assert.equal(list.body.total_items, 3);
      assert.ok(!list.text.includes('SPR-004'));
      assert.equal((await getJson(app, `${API}/`)).body.dataset.organizations, 3);
      await app.close();
    } finally {
      directory.remove();
      sources.remove();
    }
  });

  it('combines sources: taxonomies from one, organizations and tags from another', async () => {
    const directory = temporaryDirectory();
    const vocabulary = temporaryDirectory();
    const organizations = temporaryDirectory();
    try {
      nativeSourceDir(vocabulary.path);
      nativeSourceDir(organizations.path);
      const { rmSync } = await import('node:fs');
      for (const name of ['organizations.csv', 'organization_tags.csv', 'organization_identifiers.csv']) rmSync(join(vocabulary.path, name));
      for (const name of ['taxonomies.csv', 'taxonomy_terms.csv']) rmSync(join(organizations.path, name));
      const separate = await runCommand('validate', directory.path, [vocabulary.path, organizations.path]);
      assert.equal(separate.code, 0, separate.text);
      const alone = await runCommand('validate', directory.path, [organizations.path]);
      assert.equal(alone.code, 1);
      assert.match(alone.text, /organization_tags\.csv:2: tag city_services:food names no known taxonomy term/);
      assert.equal(currentSnapshotPath(directory.path), undefined, 'validate writes nothing');
    } finally {
      directory.remove();
      vocabulary.remove();
      organizations.remove();
    }
  });
});

describe('importing IRS files', () => {
  it('applies bmf_code_values.csv to state files given as separate arguments, and reads .GZ in any case', async () => {
    const directory = temporaryDirectory();
    try {
      const { copyFileSync } = await import('node:fs');
      const data = new URL('../../data/', import.meta.url).pathname;
      copyFileSync(join(data, 'irs-eo-bmf/eo_wy.csv.gz'), join(directory.path, 'EO_WY.CSV.GZ'));
      const target = join(directory.path, 'published');
      const run = await runCommand('import', target, [join(data, 'ntee/ntee_codes.csv'), join(directory.path, 'EO_WY.CSV.GZ'), join(data, 'irs-eo-bmf/bmf_code_values.csv')]);
      assert.equal(run.code, 0, run.text);
      const { app } = await serveDataDir(target);
      const page = await getJson(app, `${API}/organizations?per_page=100`);
      assert.ok(page.body.total_items > 5000);
      assert.ok(page.body.contents.filter((organization: any) => organization.tax_status !== undefined).length > 90);
      await app.close();
    } finally {
      directory.remove();
    }
  });
});

describe('importing an HSDS 3.0 tabular datapackage', () => {
  it('keeps the ids that are already UUIDs, and serves valid HSDS', async () => {
    const directory = temporaryDirectory();
    try {
      const run = await runCommand('import', directory.path, [HSDS_CONSISTENT]);
      assert.equal(run.code, 0, run.text);
      const { app } = await serveDataDir(directory.path);
      const organization = await getJson(app, `${API}/organizations/d9d5e0f5-d3ce-4f73-9a2f-4dd0ecc6c610`);
      assert.equal(organization.status, 200);
      assertHsds('organization', organization.body);
      assert.equal(organization.body.attributes[0].id, 'ae58cc39-8b70-4ab1-8aea-786882e5ac8e');
      assert.equal(organization.body.attributes[0].taxonomy_term_id, '3f7b145d-84af-42d7-8fae-eaca714b02b2');
      assert.equal(organization.body.organization_identifiers[0].id, 'd4dbcebc-0802-47cb-8651-b937ac4f2f3e');
      const taxonomy = await getJson(app, `${API}/taxonomies/5c4d79d7-cc55-470e-9f1f-8cad074e4892`);
      assert.equal(taxonomy.status, 200);
      await app.close();
    } finally {
      directory.remove();
    }
  });

  it('imports the official example as it is, saying where its references lead outside it', async () => {
    const directory = temporaryDirectory();
    try {
      const run = await runCommand('import', directory.path, [new URL('../fixtures/hsds-example/', import.meta.url).pathname]);
      assert.equal(run.code, 0, run.text);
      assert.match(run.text, /taxonomy_terms\.csv:2 \[taxonomy_id\]: names taxonomy 07ff6aee-a219-438c-b694-d2fcb6c5373b, which is not in taxonomies\.csv/);
      assert.match(run.text, /organizations\.csv:2 \[parent_organization_id\]: parent cd09a387-91f4-4555-94ec-e799c35344cd is not in the input; served as given/);
    } finally {
      directory.remove();
    }
  });
});
