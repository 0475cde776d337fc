import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { searchParameter } from '../query.ts';
import { profileSchema } from '../schemas.ts';
import { examples } from '../examples.ts';
import { getById } from '../item-route.ts';
import { getList } from '../list-route.ts';
import { taxonomyIdOfCode } from '../references.ts';
import type { TaxonomyFilter } from '../../store/store.ts';
import { field } from '../csv.ts';

const taxonomyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getList<TaxonomyFilter>(app, {
    url: '/taxonomies',
    operationId: 'getPaginatedListOfTaxonomies',
    summary: 'List taxonomies',
    description: 'Every taxonomy of the dataset, ordered by code; with `search`, best matches (every word in the code or name) first.',
    item: profileSchema('taxonomy.json'),
    example: examples.taxonomy,
    parameters: { search: searchParameter('`code`, `name` and `description`') },
    badRequest: 'A parameter has a value it does not accept (or is given twice); `invalid_params` names it and says why.',
    filter: async (_store, values) => ({ search: values.search as string[] | undefined }),
    page: (store, filter, range) => store.taxonomies(filter, range),
    all: (store, filter) => store.allTaxonomies(filter),
    csvColumns: ['id', 'code', 'name', 'description', 'uri', 'version'].map(field),
  });

  getById(app, {
    url: '/taxonomies/:id',
    operationId: 'getTaxonomyById',
    summary: 'One taxonomy; its code (e.g. `ntee`) redirects to it',
    schema: profileSchema('taxonomy.json'),
    example: examples.taxonomy as { id: string },
    noun: 'taxonomy',
    find: (store, id) => store.taxonomy(id),
    nativeLookup: {
      noun: 'code',
      description: 'The HSDS id (a UUID), or the taxonomy\'s code in any case (`ntee`, `NTEE`, `oe_services`), which answers `308` to the canonical URL.',
      find: taxonomyIdOfCode,
    },
  });
};

export default taxonomyRoutes;
