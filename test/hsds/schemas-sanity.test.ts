import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { HSDS_VERSIONS, assertHsdsVersion } from '../helpers/hsds-schemas.ts';
import type { ValidatorName } from '../helpers/hsds-schemas.ts';

const example = (folder: string, file: string): unknown => JSON.parse(readFileSync(new URL(`../../vendor/${folder}/examples/${file}`, import.meta.url), 'utf8'));

// The validators the other tests rely on must be able to fail, and must pass what Open Referral publishes.
for (const version of HSDS_VERSIONS) {
  const folder = version.name === '3.0' ? 'hsds-3.0' : 'hsds-3.2.3';
  const check = (name: ValidatorName, body: unknown) => assertHsdsVersion(version, name, body);
  describe(`HSDS ${version.name} validators`, () => {
    const id = '5c4d79d7-cc55-470e-9f1f-8cad074e4892';
    it('reject what breaks the official schemas', () => {
      assert.throws(() => check('organization', { id, name: 'n' }), /description/);
      assert.throws(() => check('organization', { id: 'x', name: 'n', description: '' }), /uuid/);
      assert.throws(() => check('organization', { id, name: 'n', description: '', website: 'not a uri' }), /uri/);
      assert.throws(() => check('organization', { id, name: 'n', description: '', email: '' }), /email/);
      assert.throws(() => check('taxonomyTerm', { id, name: 'n', description: '', parent_id: null }), /parent_id/);
      assert.throws(() => check('organizationList', { total_items: 0, contents: [] }), /total_pages/);
      assert.throws(() => check('root', { version: 3 }), /version/);
    });
    it('accept the official examples', () => {
      check('organization', example(folder, 'organization_full.json'));
      check('taxonomy', example(folder, 'taxonomy.json'));
      check('taxonomyTerm', example(folder, 'taxonomy_term.json'));
      check('root', example(folder, 'base.json'));
      // The official list examples carry only HSDS's own envelope fields; this API promises all of them.
      for (const [name, file] of [['organizationList', 'organization_list.json'], ['taxonomyList', 'taxonomy_list.json'], ['taxonomyTermList', 'taxonomy_term_list.json']] as const) {
        const body = example(folder, file) as Record<string, unknown>;
        check(name, { total_items: 1, total_pages: 1, page_number: 1, size: 1, first_page: true, last_page: true, empty: false, ...body });
      }
    });
  });
}

describe('HSDS 3.2.3 validators', () => {
  const v323 = HSDS_VERSIONS.find((version) => version.name === '3.2.3')!;
  it('hold what 3.2.3 added', () => {
    const id = '5c4d79d7-cc55-470e-9f1f-8cad074e4892';
    assert.throws(() => assertHsdsVersion(v323, 'organization', { id, name: 'n', description: '', additional_websites: [{ id }] }), /url/);
    assert.throws(() => assertHsdsVersion(v323, 'organization', { id, name: 'n', description: '', attributes: [{ id, label: 1 }] }), /label/);
    assert.throws(() => assertHsdsVersion(v323, 'root', { version: '3.2.3', publisher: { email: 'nobody' } }), /email/);
    const page = { total_items: 0, total_pages: 1, page_number: 1, size: 0, first_page: true, last_page: true, contents: [] };
    assert.throws(() => assertHsdsVersion(v323, 'taxonomyList', page), /empty/);
  });
});
