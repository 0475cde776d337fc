import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getById } from './by-id.ts';
import { getPagedList } from './paged-list.ts';

const tags = ['organizations'];

const organizationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getPagedList(app, {
    url: '/organizations',
    tags,
    operationId: 'getPaginatedListOfOrganizations',
    summary: 'List published organizations',
    description: 'Published organizations ordered by name (case-insensitive), then by native id.',
    itemSchemaId: 'OrganizationListItem',
    list: (store, range) => store.organizations(range),
  });

  getById(app, {
    url: '/organizations/:id',
    tags,
    operationId: 'getOrganizationById',
    summary: 'One published organization, with attributes and identifiers; a native id (e.g. an EIN) redirects to it',
    schemaId: 'Organization',
    noun: 'published organization',
    find: (store, id) => store.organization(id),
    findIdByNativeId: (store, nativeId) => store.organizationIdByNativeId(nativeId),
  });
};

export default organizationRoutes;
