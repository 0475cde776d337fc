import { Type } from 'typebox';
import { booleanParameter, documented, fail, instantParameter, profileExtension, searchParameter, textParameter } from './query.ts';
import type { QueryParameter } from './query.ts';
import { TAXONOMY_REFERENCE, TERM_REFERENCE, taxonomyIdOf, termOf } from './references.ts';
import { ParameterError } from './problem.ts';
import { MAX_FACET_DEPTH } from '../store/facets.ts';
import type { FacetRequest } from '../store/facets.ts';
import type { OrganizationFilter, Store } from '../store/store.ts';

/**
 * The filters of the organization list, which the API's route and the pages for people share: their
 * parameters, and the filter and facets their values ask for.
 */

const MAX_FACETS = 5;
const FACET = new RegExp(`^(.+?)(?::(\\d+))?$`);

/** `facets`: taxonomies (by code or id, each with a depth) and `tax_status`, comma-separated. */
const facetsParameter: QueryParameter<FacetRequest[] | undefined> = {
  schema: Type.Optional(
    Type.String({
      maxLength: 1000,
      ...documented(
        `Counts of the filtered list's organizations per value of each facet named, in the page's \`facets\` (a profile addition): \`tax_status\`, or a taxonomy (by code or id) and a depth, \`ntee:1\` (depth 1, the top level, when left out: NTEE major groups such as P; \`ntee:2\` codes such as P20 and K30, \`ntee:3\` K31, as the taxonomy nests them). Comma-separated, at most ${MAX_FACETS}.`,
        ['ntee:1,tax_status'],
      ),
    }),
  ),
  read(raw) {
    const names = raw.split(',').map((name) => name.trim()).filter((name) => name !== '');
    if (names.length === 0) return undefined;
    if (names.length > MAX_FACETS) return fail(`must name at most ${MAX_FACETS} facets`);
    const requests: FacetRequest[] = [];
    for (const name of names) {
      if (name.toLowerCase() === 'tax_status') {
        requests.push({ kind: 'tax_status' });
        continue;
      }
      const [, taxonomy, depth = '1'] = FACET.exec(name)!;
      if (Number(depth) < 1 || Number(depth) > MAX_FACET_DEPTH) return fail(`${name}: the depth must be 1 to ${MAX_FACET_DEPTH}`);
      requests.push({ kind: 'taxonomy', taxonomy: taxonomy!, depth: Number(depth) });
    }
    return requests;
  },
};

/** The facets asked for, each taxonomy one of this dataset's (a 400 otherwise). */
export async function facetRequestsOf(store: Store, requests: readonly FacetRequest[] | undefined): Promise<FacetRequest[]> {
  const resolved: FacetRequest[] = [];
  for (const request of requests ?? []) {
    if (request.kind === 'taxonomy' && (await store.findTaxonomy(request.taxonomy)) === undefined) {
      throw new ParameterError('facets', `${request.taxonomy} is no taxonomy of this dataset: name tax_status or one of the codes ${(await store.taxonomyCodes()).join(', ')}`);
    }
    resolved.push(request);
  }
  return resolved;
}

/** The filters of the organization list (besides paging and `format`), for the API and the pages for people. */
export const organizationParameters = {
  search: searchParameter(
    '`name`, `alternate_name` and `description`',
    'best matches of the name first (see the profile: an exact name, then the words as typed, organizations classified under what was searched for, fewest other words, word order); when fewer than 20 organizations have every word, those having every word but one of its common words follow them, ranked alike',
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
  tax_status: profileExtension(
    textParameter(100, 'Only organizations with this `tax_status` (for IRS organizations the subsection, e.g. `501(c)(3)`), compared by letters and digits in any case: `501c3` is `501(c)(3)`.', ['501(c)(3)']),
  ),
  facets: profileExtension(facetsParameter),
  full: booleanParameter('Items in the full form of `/organizations/{id}`, with `attributes` and `organization_identifiers`.'),
};

/** The filter that read values of organizationParameters ask for; a ParameterError for a term or taxonomy that names nothing. */
export async function organizationFilter(store: Store, values: Record<string, unknown>): Promise<OrganizationFilter> {
  const term = await termOf(store, 'taxonomy_term_id', values.taxonomy_term_id);
  if (values.include_descendants === true && term === undefined) throw new ParameterError('include_descendants', 'applies to taxonomy_term_id: give the term whose subtree is wanted');
  return {
    search: values.search as string[] | undefined,
    taxonomyTermId: term?.id,
    includeDescendants: values.include_descendants === true,
    taxonomyId: await taxonomyIdOf(store, 'taxonomy_id', values.taxonomy_id),
    taxStatus: values.tax_status as string | undefined,
    modifiedSince: values.modified_after as string | undefined,
  };
}
