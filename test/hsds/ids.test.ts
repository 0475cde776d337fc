import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { alphaShelterWebsites, publishedOrganizations } from '../fixtures/dataset.ts';
import { API, getJson, useTestApp } from '../helpers/app.ts';

/**
 * The id rule of docs/profile.md, implemented here from RFC 9562 directly (not with the project's code or its
 * uuid library): UUIDv5 = SHA-1 of namespace bytes + UTF-8 name, with version and variant bits set.
 */
const NAMESPACE = '0cc8344e-a6c2-489d-ba84-27565b7bbff5';

function uuidV5(name: string): string {
  const hash = createHash('sha1').update(Buffer.from(NAMESPACE.replaceAll('-', ''), 'hex')).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('ids follow the documented rule', () => {
  const test = useTestApp();

  it('organization ids are UUIDv5 of "organization:<native id>"', async () => {
    const { body } = await getJson(test().app, `${API}/organizations?per_page=100`);
    assert.equal(body.contents.length, publishedOrganizations.length);
    for (const organization of body.contents) {
      assert.equal(organization.id, uuidV5(`organization:${organization.external_identifier}`));
    }
  });

  it('taxonomy and term ids are UUIDv5 of "taxonomy:<code>" and "taxonomy_term:<taxonomy code>:<term code>"', async () => {
    const taxonomies = (await getJson(test().app, `${API}/taxonomies`)).body.contents;
    for (const taxonomy of taxonomies) assert.equal(taxonomy.id, uuidV5(`taxonomy:${taxonomy.code}`));
    const terms = (await getJson(test().app, `${API}/taxonomy_terms?per_page=100`)).body.contents;
    assert.equal(terms.length, 30);
    for (const term of terms) {
      assert.equal(term.id, uuidV5(`taxonomy_term:${term.taxonomy}:${term.code}`));
      assert.equal(term.taxonomy_id, uuidV5(`taxonomy:${term.taxonomy}`));
    }
  });

  it('attribute and identifier ids are derived from native ids too', async () => {
    const first = publishedOrganizations[0]!;
    const { body } = await getJson(test().app, `${API}/organizations/${uuidV5(`organization:${first.externalId}`)}`);
    for (const attribute of body.attributes) {
      const term = attribute.taxonomy_term;
      assert.equal(attribute.id, uuidV5(`attribute:organization:${first.externalId}:${term.taxonomy}:${term.code}`));
    }
    const [identifier] = body.organization_identifiers;
    assert.equal(identifier.id, uuidV5(`organization_identifier:${first.externalId}:US-EIN:${identifier.identifier}`));
  });

  it('additional website ids are UUIDv5 of "url:organization:<native id>:<url>", unless the source gives one', async () => {
    const { body } = await getJson(test().app, `${API}/organizations/${uuidV5('organization:NAT-002')}`);
    const [labelled, unlabelled] = alphaShelterWebsites;
    assert.deepEqual(
      body.additional_websites.map((website: any) => website.id),
      [uuidV5(`url:organization:NAT-002:${labelled!.url}`), unlabelled!.id],
    );
  });

  it('an organization and a term with the same native id get different ids', () => {
    assert.notEqual(uuidV5('organization:A'), uuidV5('taxonomy_term:things:A'));
  });
});

describe('uuidV5', () => {
  it('gives the RFC 9562 example (DNS namespace, www.example.com)', async () => {
    const { uuidBytes, uuidV5: projectUuidV5 } = await import('../../src/hsds/ids.ts');
    assert.equal(projectUuidV5(uuidBytes('6ba7b810-9dad-11d1-80b4-00c04fd430c8'), 'www.example.com'), '2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('agrees with the rule above on names outside ASCII', async () => {
    const { ID_NAMESPACE, uuidBytes, uuidV5: projectUuidV5 } = await import('../../src/hsds/ids.ts');
    for (const name of ['organization:ÉCOLE', 'organization:日本', 'url:organization:1:https://x.test/?a=b&c=ü', 'organization:'])
      assert.equal(projectUuidV5(uuidBytes(ID_NAMESPACE), name), uuidV5(name));
  });
});
