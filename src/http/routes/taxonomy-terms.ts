import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ParameterError } from '../problem.ts';
import { booleanParameter, profileExtension, searchParameter, textParameter } from '../query.ts';
import { profileSchema } from '../schemas.ts';
import { examples } from '../examples.ts';
import { getById } from '../item-route.ts';
import { getList } from '../list-route.ts';
import { TAXONOMY_REFERENCE, TERM_REFERENCE, taxonomyIdOf, termIdOfCode, termOf } from '../references.ts';
import type { TaxonomyTermFilter } from '../../store/store.ts';
import { field } from '../csv.ts';

const taxonomyFilterDescription = `Only terms of this taxonomy. ${TAXONOMY_REFERENCE}`;

const parameters = {
  search: searchParameter('`code`, `name` and `description`'),
  taxonomy_id: textParameter(300, taxonomyFilterDescription, ['ntee']),
  taxonomy: profileExtension(textParameter(300, `The same as \`taxonomy_id\` (give one of them). ${TAXONOMY_REFERENCE}`, ['oe_services'])),
  parent_id: textParameter(300, `Only the children of this term (its \`children_count\` says how many). ${TERM_REFERENCE}`, ['ntee:P']),
  top_only: booleanParameter(
    'Only top-level terms: those without a parent (`parent_id` absent), the roots of each taxonomy\'s tree. (The HSDS OpenAPI file, 3.0 to 3.2.3, describes this parameter as "terms that have not child terms", which contradicts its name; this API follows the name.)',
  ),
};

const taxonomyTermRoutes: FastifyPluginAsyncTypebox = async (app) => {
  getList<TaxonomyTermFilter>(app, {
    url: '/taxonomy_terms',
    operationId: 'getPaginatedListOfTaxonomyTerms',
    summary: 'List taxonomy terms',
    description:
      'Terms ordered by taxonomy code, then in the order of the taxonomy\'s source; with `search`, best matches (every word in the code or name) first. Each term has `children_count`. Filters combine with AND.',
    item: profileSchema('taxonomy_term.json'),
    example: examples.taxonomyTerm,
    parameters,
    badRequest: 'A parameter has a value it does not accept (or is given twice), or a taxonomy or term names nothing; `invalid_params` says which and why.',
    filter: async (store, values) => {
      const byId = await taxonomyIdOf(store, 'taxonomy_id', values.taxonomy_id);
      const byName = await taxonomyIdOf(store, 'taxonomy', values.taxonomy);
      if (byId !== undefined && byName !== undefined && byId !== byName) {
        throw new ParameterError('taxonomy', 'names another taxonomy than taxonomy_id; give one of them');
      }
      const taxonomyId = byId ?? byName;
      const parent = await termOf(store, 'parent_id', values.parent_id);
      return { search: values.search as string[] | undefined, taxonomyId, parentId: parent?.id, topOnly: values.top_only === true };
    },
    page: (store, filter, range) => store.taxonomyTerms(filter, range),
    all: (store, filter) => store.allTaxonomyTerms(filter),
    csvColumns: ['id', 'taxonomy', 'taxonomy_id', 'code', 'name', 'description', 'parent_id', 'children_count'].map(field),
  });

  getById(app, {
    url: '/taxonomy_terms/:id',
    operationId: 'getTaxonomyTermById',
    summary: 'One taxonomy term, with its taxonomy; `taxonomy:code` (e.g. `ntee:K31`) redirects to it',
    schema: profileSchema('taxonomy_term.json'),
    example: examples.taxonomyTermDetail,
    noun: 'taxonomy term',
    find: (store, id) => store.taxonomyTerm(id),
    nativeLookup: {
      noun: 'taxonomy:code',
      description:
        'The HSDS id (a UUID), or `taxonomy:code` (`ntee:K31`, `oe_services:1206-2`; the taxonomy code in any case, the term code exactly, else in any case; the colon may be sent as `%3A`), which answers `308` to the canonical URL.',
      find: termIdOfCode,
    },
  });
};

export default taxonomyTermRoutes;
