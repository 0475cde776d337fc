import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pageEnvelope, pagingOf, positionRange } from '../pagination.ts';
import { ParameterError } from '../problem.ts';
import { notFound } from '../plugins/app/problems.ts';
import { canonicalUuid, sendJson } from '../reply.ts';
import { IdParams, PagingQuery, pageOf, problemResponse } from '../schemas.ts';
import type { Store } from '../../store/store.ts';

const tags = ['taxonomy_terms'];

/** Resolves the `taxonomy` filter (an id or a code, any case) or fails naming the accepted codes. */
async function taxonomyFilter(store: Store, value: string | undefined): Promise<string | undefined> {
  if (value === undefined) return undefined;
  const taxonomy = await store.findTaxonomy(value.trim());
  if (taxonomy !== undefined) return taxonomy.id;
  const codes = await store.taxonomyCodes();
  throw new ParameterError('taxonomy', `must be a taxonomy id or one of the codes ${codes.join(', ')}`);
}

const taxonomyTermRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/taxonomy_terms',
    {
      schema: {
        tags,
        operationId: 'getPaginatedListOfTaxonomyTerms',
        summary: 'List taxonomy terms',
        description: 'Terms ordered by taxonomy code, then in the order of the taxonomy\'s source (parents before children).',
        querystring: Type.Object({
          ...PagingQuery,
          taxonomy: Type.Optional(
            Type.String({ description: 'Only terms of this taxonomy, given by its id or its code (e.g. `ntee`), case-insensitive.' }),
          ),
        }),
        response: {
          200: pageOf('TaxonomyTerm', 'A page of taxonomy terms.'),
          400: problemResponse('A paging parameter is not an allowed integer, or `taxonomy` names no taxonomy.'),
        },
      },
    },
    async (request, reply) => {
      const paging = pagingOf(request.query);
      const taxonomyId = await taxonomyFilter(app.store, request.query.taxonomy);
      const page = await app.store.taxonomyTerms({ taxonomyId }, positionRange(paging));
      return sendJson(reply, pageEnvelope(request, paging, page));
    },
  );

  app.get(
    '/taxonomy_terms/:id',
    {
      schema: {
        tags,
        operationId: 'getTaxonomyTermById',
        summary: 'One taxonomy term, with its taxonomy',
        params: IdParams,
        response: {
          200: Type.Ref('TaxonomyTermDetail'),
          404: problemResponse('No taxonomy term has this id (or the id is not a UUID).'),
        },
      },
    },
    async (request, reply) => {
      const id = canonicalUuid(request.params.id);
      const term = id === undefined ? undefined : await app.store.taxonomyTerm(id);
      if (term === undefined) return notFound(reply, `No taxonomy term has id "${request.params.id}".`);
      return sendJson(reply, term);
    },
  );
};

export default taxonomyTermRoutes;
