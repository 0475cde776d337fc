import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { organizationId, urlId } from '../../src/hsds/ids.ts';
import { alphaShelterWebsites, publishedOrganizations, unpublishedOrganizations } from '../fixtures/dataset.ts';
import { API, getJson, useTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

/** Every value in a document, recursively, with its path. */
function* leaves(value: unknown, path = '$'): Generator<[string, unknown]> {
  if (Array.isArray(value)) for (const [index, item] of value.entries()) yield* leaves(item, `${path}[${index}]`);
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) yield* leaves(item, `${path}.${key}`);
  else yield [path, value];
}

function assertNoEmptyOptionalFields(document: unknown): void {
  for (const [path, value] of leaves(document)) {
    assert.notEqual(value, null, `${path} is null`);
    if (!path.endsWith('.description')) assert.notEqual(value, '', `${path} is an empty string`);
  }
}

describe('organizations', () => {
  const test = useTestApp();

  it('lists published organizations by name, case-insensitively, as valid HSDS', async () => {
    const { status, headers, body } = await getJson(test().app, `${API}/organizations?per_page=100`);
    assert.equal(status, 200);
    assert.match(String(headers['content-type']), /^application\/json/);
    assertHsds('organizationList', body);
    const key = (name: string) => name.toLowerCase();
    const expected = [...publishedOrganizations].sort((a, b) => (key(a.name) < key(b.name) ? -1 : key(a.name) > key(b.name) ? 1 : 0));
    assert.deepEqual(body.contents.map((item: any) => item.name), expected.map((organization) => organization.name));
    assert.equal(body.total_items, publishedOrganizations.length);
    assertNoEmptyOptionalFields(body.contents);
  });

  it('defaults to 20 per page', async () => {
    const { body } = await getJson(test().app, `${API}/organizations`);
    assert.equal(body.size, 20);
    assert.equal(body.total_pages, 2);
  });

  it('renders list items with the native id, classifications and an empty description when the source has none', async () => {
    const { body } = await getJson(test().app, `${API}/organizations?per_page=100`);
    const beta = body.contents.find((item: any) => item.name === 'Beta Clinic');
    const source = publishedOrganizations.find((organization) => organization.name === 'Beta Clinic')!;
    assert.equal(beta.external_identifier, source.externalId);
    assert.equal(beta.id, organizationId(source.externalId));
    assert.equal(beta.description, '');
    assert.deepEqual(
      beta.classifications.map((tag: any) => `${tag.taxonomy}:${tag.code}:${tag.name}`),
      source.tags.map((tag) => `${tag.taxonomy}:${tag.code}:${tag.taxonomy === 'things' ? `Thing ${tag.code}` : tag.code.toUpperCase()}`),
    );
    assert.equal(beta.attributes, undefined, 'list items stay compact');
  });

  it('serves one organization with attributes and identifiers in the standard HSDS form', async () => {
    const source = publishedOrganizations[0]!;
    const { status, body } = await getJson(test().app, `${API}/organizations/${organizationId(source.externalId)}`);
    assert.equal(status, 200);
    assertHsds('organization', body);
    assertNoEmptyOptionalFields(body);
    assert.equal(body.attributes.length, source.tags.length);
    for (const attribute of body.attributes) {
      assert.equal(attribute.link_id, body.id);
      assert.equal(attribute.link_entity, 'organization');
      assert.equal(attribute.taxonomy_term.id, attribute.taxonomy_term_id);
    }
    assert.deepEqual(
      body.organization_identifiers.map((identifier: any) => [identifier.identifier_scheme, identifier.identifier, identifier.organization_id]),
      [['US-EIN', '12345670', body.id]],
    );
  });

  it('serves additional websites and attribute labels in the full form only', async () => {
    const id = organizationId('NAT-002');
    const { status, body } = await getJson(test().app, `${API}/organizations/${id}`);
    assert.equal(status, 200);
    assertHsds('organization', body);
    assertNoEmptyOptionalFields(body);
    const [labelled, unlabelled] = alphaShelterWebsites;
    assert.deepEqual(body.additional_websites, [
      { id: urlId('NAT-002', labelled!.url), url: labelled!.url, label: 'Donate', organization_id: id },
      { id: unlabelled!.id, url: unlabelled!.url, organization_id: id },
    ]);
    assert.deepEqual(Object.keys(body).slice(-4), ['additional_websites', 'attributes', 'organization_identifiers', 'last_modified']);
    assert.deepEqual(body.attributes.map((attribute: any) => [attribute.taxonomy_term.code, attribute.label]), [['B', 'Night shelter']]);

    const { body: page } = await getJson(test().app, `${API}/organizations?per_page=100`);
    const listed = page.contents.find((item: any) => item.id === id);
    assert.equal(listed.website, 'https://example.org/org/1');
    assert.equal(listed.additional_websites, undefined, "list items stay compact (HSDS 3.2.3's organization_list has no arrays)");
    const { body: full } = await getJson(test().app, `${API}/organizations?per_page=100&full=true`);
    assertHsds('organizationList', full);
    assert.deepEqual(full.contents.find((item: any) => item.id === id), body);

    const other = await getJson(test().app, `${API}/organizations/${organizationId('NAT-001')}`);
    assert.equal(other.body.additional_websites, undefined);
    assert.ok(other.body.attributes.every((attribute: any) => !('label' in attribute)));
  });

  it('accepts an upper-case uuid', async () => {
    const id = organizationId(publishedOrganizations[1]!.externalId);
    const { status, body } = await getJson(test().app, `${API}/organizations/${id.toUpperCase()}`);
    assert.equal(status, 200);
    assert.equal(body.id, id);
  });

  it('links a parent only when the parent is published', async () => {
    const child = await getJson(test().app, `${API}/organizations/${organizationId(publishedOrganizations[4]!.externalId)}`);
    assert.equal(child.body.parent_organization_id, organizationId('NAT-001'));
    const orphan = await getJson(test().app, `${API}/organizations/${organizationId(publishedOrganizations[6]!.externalId)}`);
    assert.equal(orphan.body.parent_organization_id, undefined);
  });

  it('redirects a native id to the canonical URL (308), keeping the query', async () => {
    const response = await test().app.inject({ method: 'GET', url: `${API}/organizations/NAT-001?x=1` });
    assert.equal(response.statusCode, 308);
    assert.equal(response.headers.location, `http://localhost${API}/organizations/${organizationId('NAT-001')}?x=1`);
    assert.equal((await getJson(test().app, `${API}/organizations/NAT-404`)).status, 404);
  });

  describe('an unpublished organization is invisible everywhere', () => {
    it('is not found by id', async () => {
      for (const organization of unpublishedOrganizations) {
        const { status, body } = await getJson(test().app, `${API}/organizations/${organizationId(organization.externalId)}`);
        assert.equal(status, 404);
        assert.equal(body.status, 404);
        assert.equal((await getJson(test().app, `${API}/organizations/${encodeURIComponent(organization.externalId)}`)).status, 404, 'nor by native id');
      }
    });

    it('is in no page and no count', async () => {
      const hidden = new Set(unpublishedOrganizations.map((organization) => organizationId(organization.externalId)));
      const seen: string[] = [];
      for (let page = 1; page <= 12; page++) {
        const { body } = await getJson(test().app, `${API}/organizations?per_page=2&page=${page}`);
        assert.equal(body.total_items, publishedOrganizations.length);
        seen.push(...body.contents.map((item: any) => item.id));
      }
      assert.equal(seen.length, publishedOrganizations.length);
      assert.ok(seen.every((id) => !hidden.has(id)));
    });

    it('is not named in any rendered document', async () => {
      const { text } = await getJson(test().app, `${API}/organizations?per_page=100`);
      for (const organization of unpublishedOrganizations) assert.ok(!text.includes(organization.externalId));
      assert.ok(!text.includes('Hidden Parent'));
    });
  });
});
