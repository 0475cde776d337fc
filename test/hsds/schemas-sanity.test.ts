import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertHsds } from '../helpers/hsds-schemas.ts';

// The validators the other tests rely on must be able to fail.
describe('HSDS validators', () => {
  const id = '5c4d79d7-cc55-470e-9f1f-8cad074e4892';
  it('reject what breaks the official schemas', () => {
    assert.throws(() => assertHsds('organization', { id, name: 'n' }), /description/);
    assert.throws(() => assertHsds('organization', { id: 'x', name: 'n', description: '' }), /uuid/);
    assert.throws(() => assertHsds('organization', { id, name: 'n', description: '', website: 'not a uri' }), /uri/);
    assert.throws(() => assertHsds('organization', { id, name: 'n', description: '', email: '' }), /email/);
    assert.throws(() => assertHsds('taxonomyTerm', { id, name: 'n', description: '', parent_id: null }), /parent_id/);
    assert.throws(() => assertHsds('organizationList', { total_items: 0, contents: [] }), /total_pages/);
  });
  it('accept the official examples', () => {
    assertHsds('taxonomy', { id, name: 'n', description: 'd', uri: 'http://example.com' });
  });
});
