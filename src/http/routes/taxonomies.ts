import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getById } from './by-id.ts';
import { getPagedList } from './paged-list.ts';

const tags = ['taxonomies'];

const taxonomyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getPagedList(app, {
    url: '/taxonomies',
    tags,
    operationId: 'getPaginatedListOfTaxonomies',
    summary: 'List taxonomies',
    description: 'Every taxonomy of the dataset, ordered by code.',
    itemSchemaId: 'Taxonomy',
    list: (store, range) => store.taxonomies(range),
  });

  getById(app, {
    url: '/taxonomies/:id',
    tags,
    operationId: 'getTaxonomyById',
    summary: 'One taxonomy',
    schemaId: 'Taxonomy',
    noun: 'taxonomy',
    find: (store, id) => store.taxonomy(id),
  });
};

export default taxonomyRoutes;
