import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { booleanParameter, instantParameter, profileExtension, searchParameter, textParameter } from '../query.ts';
import { profileSchema } from '../schemas.ts';
import { examples } from '../examples.ts';
import { getById } from './by-id.ts';
import { getList } from './list.ts';
import { TAXONOMY_REFERENCE, TERM_REFERENCE, organizationIdOfNativeId, taxonomyIdOf, termOf } from './resolve.ts';
import type { OrganizationFilter } from '../../store/store.ts';
import { ParameterError } from '../problem.ts';

const parameters = {
  search: searchParameter(
    '`name`, `alternate_name` and `description`',
    'those whose `name` or `alternate_name` holds every word first, then the others, each group in list order',
  ),
  taxonomy_term_id: textParameter(300, `Only organizations tagged with this term (exactly this term, as listed in their \`classifications\`). ${TERM_REFERENCE}`, [
    'ntee:P20',
  ]),
  include_descendants: profileExtension(
    booleanParameter(
      'With `taxonomy_term_id`: organizations tagged with that term or with any term below it (`taxonomy_term_id=ntee:P&include_descendants=true`: every Human Services code). Without it, `taxonomy_term_id` means exactly that term, as HSDS has it.',
    ),
  ),
  taxonomy_id: textParameter(300, `Only organizations tagged with any term of this taxonomy. ${TAXONOMY_REFERENCE}`, ['ntee']),
  modified_after: profileExtension(instantParameter(
    'Only organizations whose `last_modified` is on or after this instant: an ISO 8601 date (midnight UTC) or date-time (UTC when it has no offset). `last_modified` is when this server first published the organization as it is now.',
  )),
  full: booleanParameter('Items in the full form of `/organizations/{id}`, with `attributes` and `organization_identifiers`.'),
};

const organizationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getList<OrganizationFilter>(app, {
    url: '/organizations',
    operationId: 'getPaginatedListOfOrganizations',
    summary: 'List published organizations',
    description:
      'Published organizations ordered by name (case-insensitive), then by native id; with `search`, best matches (every word in the name) first. Filters combine with AND.',
    item: { anyOf: [profileSchema('compiled/organization_list.json'), profileSchema('organization.json')], description: 'The list form; with `full=true`, the full form.' },
    example: examples.organizationListItem,
    parameters,
    badRequest: 'A parameter has a value it does not accept (or is given twice); `invalid_params` names it and says why.',
    filter: async (store, values) => {
      const term = await termOf(store, 'taxonomy_term_id', values.taxonomy_term_id);
      if (values.include_descendants === true && term === undefined) throw new ParameterError('include_descendants', 'applies to taxonomy_term_id: give the term whose subtree is wanted');
      return {
        search: values.search as string[] | undefined,
        taxonomyTermId: term?.id,
        includeDescendants: values.include_descendants === true,
        taxonomyId: await taxonomyIdOf(store, 'taxonomy_id', values.taxonomy_id),
        modifiedSince: values.modified_after as string | undefined,
      };
    },
    page: (store, filter, range, values) => store.organizations(filter, range, { full: values.full === true }),
    all: (store, filter, values) => store.allOrganizations(filter, { full: values.full === true }),
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
