import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pageEnvelope, pagingOf, positionRange, rejectNonDecimalPaging } from '../pagination.ts';
import { ParameterError } from '../problem.ts';
import { sendJson } from '../reply.ts';
import { PagingQuery, pageOf, problemResponse } from '../schemas.ts';
import { getById } from './by-id.ts';
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
      preValidation: rejectNonDecimalPaging,
    },
    async (request, reply) => {
      const paging = pagingOf(request.query);
      const taxonomyId = await taxonomyFilter(app.store, request.query.taxonomy);
      const page = await app.store.taxonomyTerms({ taxonomyId }, positionRange(paging));
      return sendJson(reply, pageEnvelope(request, paging, page));
    },
  );

  getById(app, {
    url: '/taxonomy_terms/:id',
    tags,
    operationId: 'getTaxonomyTermById',
    summary: 'One taxonomy term, with its taxonomy',
    schemaId: 'TaxonomyTermDetail',
    noun: 'taxonomy term',
    find: (store, id) => store.taxonomyTerm(id),
  });
};

export default taxonomyTermRoutes;
