import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pageEnvelope, pagingOf, positionRange } from '../pagination.ts';
import { notFound } from '../plugins/app/problems.ts';
import { canonicalUuid, sendJson } from '../reply.ts';
import { IdParams, PagingQuery, pageOf, problemResponse } from '../schemas.ts';

const tags = ['taxonomies'];

const taxonomyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/taxonomies',
    {
      schema: {
        tags,
        operationId: 'getPaginatedListOfTaxonomies',
        summary: 'List taxonomies',
        description: 'Every taxonomy of the dataset, ordered by code.',
        querystring: Type.Object(PagingQuery),
        response: {
          200: pageOf('Taxonomy', 'A page of taxonomies.'),
          400: problemResponse('A paging parameter is not an allowed integer.'),
        },
      },
    },
    async (request, reply) => {
      const paging = pagingOf(request.query);
      return sendJson(reply, pageEnvelope(request, paging, await app.store.taxonomies(positionRange(paging))));
    },
  );

  app.get(
    '/taxonomies/:id',
    {
      schema: {
        tags,
        operationId: 'getTaxonomyById',
        summary: 'One taxonomy',
        params: IdParams,
        response: {
          200: Type.Ref('Taxonomy'),
          404: problemResponse('No taxonomy has this id (or the id is not a UUID).'),
        },
      },
    },
    async (request, reply) => {
      const id = canonicalUuid(request.params.id);
      const taxonomy = id === undefined ? undefined : await app.store.taxonomy(id);
      if (taxonomy === undefined) return notFound(reply, `No taxonomy has id "${request.params.id}".`);
      return sendJson(reply, taxonomy);
    },
  );
};

export default taxonomyRoutes;
