import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pageEnvelope, pagingOf, positionRange } from '../pagination.ts';
import { notFound } from '../plugins/app/problems.ts';
import { canonicalUuid, sendJson } from '../reply.ts';
import { IdParams, PagingQuery, pageOf, problemResponse } from '../schemas.ts';

const tags = ['organizations'];

const organizationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/organizations',
    {
      schema: {
        tags,
        operationId: 'getPaginatedListOfOrganizations',
        summary: 'List published organizations',
        description: 'Published organizations ordered by name (case-insensitive), then by native id.',
        querystring: Type.Object(PagingQuery),
        response: {
          200: pageOf('OrganizationListItem', 'A page of organizations.'),
          400: problemResponse('A paging parameter is not an allowed integer.'),
        },
      },
    },
    async (request, reply) => {
      const paging = pagingOf(request.query);
      const page = await app.store.organizations(positionRange(paging));
      return sendJson(reply, pageEnvelope(request, paging, page));
    },
  );

  app.get(
    '/organizations/:id',
    {
      schema: {
        tags,
        operationId: 'getOrganizationById',
        summary: 'One published organization, with attributes and identifiers',
        params: IdParams,
        response: {
          200: Type.Ref('Organization'),
          404: problemResponse('No published organization has this id (or the id is not a UUID).'),
        },
      },
    },
    async (request, reply) => {
      const id = canonicalUuid(request.params.id);
      const organization = id === undefined ? undefined : await app.store.organization(id);
      if (organization === undefined) return notFound(reply, `No published organization has id "${request.params.id}".`);
      return sendJson(reply, organization);
    },
  );
};

export default organizationRoutes;
