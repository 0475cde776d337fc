import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { examples, pageExample } from '../../src/http/examples.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

describe('OpenAPI examples', () => {
  it('are valid HSDS 3.0 documents, like the responses they stand for', () => {
    assertHsds('organization', examples.organizationListItem);
    assertHsds('organization', examples.organization);
    assertHsds('taxonomy', examples.taxonomy);
    assertHsds('taxonomyTerm', examples.taxonomyTerm);
    assertHsds('taxonomyTerm', examples.taxonomyTermDetail);
    assertHsds('organizationList', pageExample('/organizations', [examples.organizationListItem]));
    assertHsds('taxonomyTermList', pageExample('/taxonomy_terms', [examples.taxonomyTerm]));
  });

  it('show the nested forms of the full organization', () => {
    assert.equal(examples.organization.attributes[0].taxonomy_term.code, 'K31');
    assert.equal(examples.organization.organization_identifiers[0].identifier_scheme, 'US-EIN');
    assert.equal(examples.organization.additional_websites[0].label, 'Donate');
    assert.equal(examples.organizationListItem.additional_websites, undefined);
    assert.equal(examples.taxonomyTermDetail.taxonomy_detail.code, 'ntee');
  });
});
