import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ParameterError } from '../problem.ts';
import { getById } from './by-id.ts';
import { getPagedList } from './paged-list.ts';
import type { Store } from '../../store/store.ts';

const tags = ['taxonomy_terms'];

/** Resolves the `taxonomy` filter (an id or a code, any case) or fails naming the accepted codes. */
async function taxonomyFilter(store: Store, value: unknown): Promise<string | undefined> {
  if (typeof value !== 'string') return undefined;
  const taxonomy = await store.findTaxonomy(value.trim());
  if (taxonomy !== undefined) return taxonomy.id;
  const codes = await store.taxonomyCodes();
  throw new ParameterError('taxonomy', `must be a taxonomy id or one of the codes ${codes.join(', ')}`);
}

const taxonomyTermRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getPagedList(app, {
    url: '/taxonomy_terms',
    tags,
    operationId: 'getPaginatedListOfTaxonomyTerms',
    summary: 'List taxonomy terms',
    description: 'Terms ordered by taxonomy code, then in the order of the taxonomy\'s source (parents before children).',
    itemSchemaId: 'TaxonomyTerm',
    filters: {
      parameters: {
        taxonomy: Type.Optional(
          Type.String({ description: 'Only terms of this taxonomy, given by its id or its code (e.g. `ntee`), case-insensitive.' }),
        ),
      },
      badRequest: 'A paging parameter is not an allowed integer, or `taxonomy` names no taxonomy.',
    },
    list: async (store, range, query) => store.taxonomyTerms({ taxonomyId: await taxonomyFilter(store, query.taxonomy) }, range),
  });

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
