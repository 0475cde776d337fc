import { renderOrganization, renderServedTerm, renderTaxonomy, renderTerm, withLastModified } from '../hsds/render.ts';
import type { OrganizationRecord } from '../hsds/records.ts';
import { NTEE_TAXONOMY } from '../hsds/known-taxonomies.ts';
import { HSDS_VERSION } from '../hsds/profile.ts';
import { KEPT_VERSIONS } from '../store/tables.ts';

/**
 * Examples for the OpenAPI document, made by the same rendering as the served documents, so they
 * cannot drift from what the API answers (and a test validates them against HSDS). The organization
 * is fictional; the taxonomy and terms are real NTEE ones.
 */

export const EXAMPLE_ORIGIN = 'https://api.example.org/api/hsds/v3';
const PUBLISHED_AT = '2026-11-01T06:00:00.000Z';

const ntee = renderTaxonomy(NTEE_TAXONOMY);
const foodGroup = renderTerm({ taxonomy: 'ntee', code: 'K', name: 'Food, Agriculture & Nutrition', description: '' }, ntee, undefined);
const foodPrograms = renderTerm({ taxonomy: 'ntee', code: 'K30', name: 'Food Programs', description: 'Organizations that provide access to free or low-cost food.', parentCode: 'K' }, ntee, foodGroup.id);
const foodBanks = renderTerm(
  {
    taxonomy: 'ntee',
    code: 'K31',
    name: 'Food Banks & Pantries',
    description: 'Organizations that gather, store and distribute food to indigents at no charge or at low cost.',
    parentCode: 'K30',
  },
  ntee,
  foodPrograms.id,
);

const organizationRecord: OrganizationRecord = {
  externalId: '990000001',
  status: 'published',
  name: 'Example Community Food Bank',
  description: 'Collects donated food and distributes it through partner pantries.',
  website: 'https://foodbank.example.org',
  additionalWebsites: [{ url: 'https://foodbank.example.org/donate', label: 'Donate' }],
  taxStatus: '501(c)(3)',
  taxId: '99-0000001',
  legalStatus: 'Corporation',
  identifiers: [{ scheme: 'US-EIN', type: 'Employer Identification Number', identifier: '990000001' }],
  tags: [],
};
const organization = renderOrganization(organizationRecord, [{ term: foodBanks }], undefined);

export const examples = {
  taxonomy: ntee.object,
  taxonomyTerm: JSON.parse(renderServedTerm(foodBanks, 0).listJson),
  taxonomyTermDetail: JSON.parse(renderServedTerm(foodBanks, 0).detailJson),
  organizationListItem: JSON.parse(withLastModified(JSON.stringify(organization.listItem), PUBLISHED_AT)),
  organization: JSON.parse(withLastModified(organization.detailJson, PUBLISHED_AT)),
  organizationId: organization.id,
  termId: foodBanks.id,
};

/** A one-page list of `items` as this API would send it for `path`. */
export function pageExample(path: string, items: unknown[]) {
  const url = `${EXAMPLE_ORIGIN}${path}?page=1`;
  return {
    total_items: items.length,
    total_pages: 1,
    page_number: 1,
    size: items.length,
    first_page: true,
    last_page: true,
    empty: items.length === 0,
    contents: items,
    links: { self: url, first: url, last: url },
  };
}

export const problemExamples = {
  badParameter: {
    type: `${EXAMPLE_ORIGIN}/profile#invalid-parameter`,
    title: 'Invalid query parameter',
    status: 400,
    detail: 'per_page must be an integer from 1 to 100',
    invalid_params: [{ name: 'per_page', reason: 'must be an integer from 1 to 100' }],
  },
  versionNotKept: {
    type: `${EXAMPLE_ORIGIN}/profile#version-not-kept`,
    title: 'Version not kept',
    status: 410,
    detail: `Version 0123456789abcdef is not one whose changes this server keeps: it keeps those since at most the last ${KEPT_VERSIONS} versions it published, and none whose feed would remove more organizations than a copy holds; the oldest kept is 032ae266ba64c02d of ${PUBLISHED_AT}. Copy everything again: ${EXAMPLE_ORIGIN}/changes?since=0`,
  },
  packageBeingMade: {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: 'The package of dataset version 032ae266ba64c02d is being made. Try again in 30 s.',
  },
  notFound: (noun: string) => ({
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    detail: `No ${noun} has id "3f0c1e9a-0000-5000-8000-000000000000".`,
  }),
};

export const rootExample = {
  version: HSDS_VERSION,
  profile: `${EXAMPLE_ORIGIN}/profile`,
  openapi_url: `${EXAMPLE_ORIGIN}/openapi.json`,
  description: 'Nonprofit organizations of the United States, from the IRS, classified by NTEE and Open Eligibility.',
  publisher: { name: 'Example Community Data', identifier: 'US-EIN-990000002', email: 'data@example.org', website: 'https://example.org/data' },
  dataset: { version: '032ae266ba64c02d', published_at: PUBLISHED_AT, organizations: 326224, taxonomies: 3, taxonomy_terms: 1066 },
  links: {
    self: EXAMPLE_ORIGIN,
    organizations: `${EXAMPLE_ORIGIN}/organizations`,
    taxonomies: `${EXAMPLE_ORIGIN}/taxonomies`,
    taxonomy_terms: `${EXAMPLE_ORIGIN}/taxonomy_terms`,
    changes: `${EXAMPLE_ORIGIN}/changes?since=032ae266ba64c02d`,
    datapackage: `${EXAMPLE_ORIGIN}/datapackage.zip`,
    openapi: `${EXAMPLE_ORIGIN}/openapi.json`,
    profile: `${EXAMPLE_ORIGIN}/profile`,
    docs: `${EXAMPLE_ORIGIN}/docs`,
    home: `${new URL(EXAMPLE_ORIGIN).origin}/`,
  },
};
