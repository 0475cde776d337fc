import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { profileSchema, SEARCH_PAGE_FIELDS } from '../schemas.ts';
import { examples } from '../examples.ts';
import { getById } from '../item-route.ts';
import { getList } from '../list-route.ts';
import { organizationIdOfNativeId } from '../references.ts';
import type { OrganizationFilter } from '../../store/store.ts';
import type { FacetRequest } from '../../store/facets.ts';
import { field } from '../csv.ts';
import { facetRequestsOf, organizationFilter, organizationParameters } from '../organization-filter.ts';
import type { CsvColumn } from '../csv.ts';

/**
 * The columns of the organization list as CSV: the list form's fields, and its classifications in
 * one column as `taxonomy:code` separated by `; ` (`ntee:K31; oe_services:1128`), the form
 * `taxonomy_term_id` takes.
 */
const ORGANIZATION_CSV_COLUMNS: CsvColumn[] = [
  ...['id', 'external_identifier', 'name', 'alternate_name', 'description', 'email', 'website', 'tax_status', 'tax_id', 'year_incorporated', 'legal_status', 'uri', 'parent_organization_id', 'last_modified'].map(field),
  {
    name: 'classifications',
    value: (item) => ((item.classifications ?? []) as { taxonomy: string; code: string }[]).map((term) => `${term.taxonomy}:${term.code}`).join('; '),
  },
];

const organizationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getList<OrganizationFilter>(app, {
    url: '/organizations',
    operationId: 'getPaginatedListOfOrganizations',
    summary: 'List published organizations',
    description:
      'Published organizations ordered by name (case-insensitive), then by native id; with `search`, best matches (every word in the name) first. Filters combine with AND.',
    item: { anyOf: [profileSchema('compiled/organization_list.json'), profileSchema('organization.json')], description: 'The list form; with `full=true`, the full form.' },
    example: examples.organizationListItem,
    parameters: organizationParameters,
    pageFields: SEARCH_PAGE_FIELDS,
    badRequest: 'A parameter has a value it does not accept (or is given twice); `invalid_params` names it and says why.',
    filter: organizationFilter,
    page: async (store, filter, range, values) => {
      const requests = await facetRequestsOf(store, values.facets as FacetRequest[] | undefined);
      const [page, facets] = await Promise.all([
        store.organizations(filter, range, { full: values.full === true }),
        requests.length === 0 ? undefined : store.organizationFacets(filter, requests),
      ]);
      return facets === undefined ? page : { ...page, facets };
    },
    all: (store, filter, values) => store.allOrganizations(filter, { full: values.full === true }),
    csvColumns: ORGANIZATION_CSV_COLUMNS,
  });

  getById(app, {
    url: '/organizations/:id',
    operationId: 'getOrganizationById',
    summary: 'One published organization, with attributes and identifiers; a native id (e.g. an EIN) redirects to it',
    schema: profileSchema('organization.json'),
    example: examples.organization,
    noun: 'published organization',
    find: (store, id) => store.organization(id),
    nativeLookup: {
      noun: 'native id',
      description:
        'The HSDS id (a UUID), or the organization\'s native id (its `external_identifier`; for IRS organizations the EIN, `900897473`), which answers `308` to the canonical URL. An EIN may also be written with a dash (`90-0897473`), without its leading zero (`10211530` for `010211530`) or with extra ones (`0900897473`): a value that is no native id as given is tried as an EIN in its 9-digit form.',
      find: organizationIdOfNativeId,
    },
  });
};

export default organizationRoutes;
