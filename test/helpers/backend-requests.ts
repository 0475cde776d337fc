import { organizationId, taxonomyId, taxonomyTermId } from '../../src/hsds/ids.ts';
import { outsideTaxonomy } from '../../src/hsds/records.ts';
import { fixtureDataset, publishedOrganizations, terms, unpublishedOrganizations } from '../fixtures/dataset.ts';

/**
 * A dataset and the requests that exercise every kind of answer of the API (lists, filters, search,
 * facets, streams, items, redirects, 404s, 400s): asked of both stores (backends.test.ts) and of both
 * ways a response is sent (hits-before-fastify.test.ts).
 */

/** Words that only match when both backends fold, split and stem text alike. */
const worded = [
  { ...publishedOrganizations[0]!, externalId: 'NAT-W1', name: 'Café Ünïcode Straße', description: 'Shelters for İstanbul families, ½ price' },
  { ...publishedOrganizations[1]!, externalId: 'NAT-W2', name: 'Housing Helpers', alternateName: 'cafe families', description: 'Helping runners' },
];
/** A native id that is an EIN with a leading zero, looked up as people type it. */
const ein = { ...publishedOrganizations[2]!, externalId: '010211530', name: 'Leading Zero Fund' };
/** A term of no taxonomy of the dataset (HSDS allows it), tagging one organization. */
const loose = { taxonomy: outsideTaxonomy('elsewhere'), code: 'loose', name: 'Loose term', description: '', taxonomyId: taxonomyId('elsewhere'), taxonomyText: 'Elsewhere' };
const looselyTagged = { ...publishedOrganizations[3]!, externalId: 'NAT-L1', name: 'Loosely Tagged', tags: [{ taxonomy: outsideTaxonomy('elsewhere'), code: 'loose' }] };
export const dataset = () =>
  fixtureDataset({ terms: [...terms, loose], organizations: [...publishedOrganizations, ...unpublishedOrganizations, ...worded, ein, looselyTagged] });
export const now = () => new Date('2026-03-01T12:00:00Z');

const red = taxonomyTermId('Colors', 'red');
export const PATHS = [
  '/',
  '/organizations',
  '/organizations?per_page=3&page=2',
  '/organizations?per_page=100&page=9',
  '/organizations?full=true&per_page=5',
  `/organizations?taxonomy_term_id=${red}`,
  '/organizations?taxonomy_term_id=colors:RED&per_page=2&page=2',
  '/organizations?taxonomy_id=things&per_page=4&page=3',
  '/organizations?taxonomy_id=Colors&taxonomy_term_id=things:A',
  '/organizations?taxonomy_term_id=things:A&include_descendants=true',
  '/organizations?taxonomy_term_id=things:A&include_descendants=1&per_page=2&page=2',
  '/organizations?taxonomy_term_id=things:A&include_descendants=true&search=helps',
  '/organizations?include_descendants=true',
  '/organizations?search=shelter',
  '/organizations?search=CAFE+families',
  '/organizations?search=istanbul',
  '/organizations?search=strasse',
  '/organizations?search=%C2%BD',
  '/organizations?search=helps&taxonomy_term_id=colors:red',
  '/organizations?search=helping',
  '/organizations?search=nothing-like-this',
  '/organizations?search=the',
  '/organizations?search=helpss',
  '/organizations?search=shelt',
  '/organizations?search=sheltr',
  '/organizations?search=shelter&facets=colors,things:2,tax_status',
  // No name holds both words: partial matches, under a filter too, with facets, streamed.
  // A search that names a category (the term BLUE): its organizations follow the name matches, under filters too.
  '/organizations?search=blue',
  '/organizations?search=blue&facets=colors,tax_status&per_page=2&page=2',
  '/organizations?search=blue&tax_status=501c3',
  '/organizations?format=ndjson&search=blue',
  '/organizations?search=shelter+clinic',
  '/organizations?search=shelter+clinic&taxonomy_term_id=colors:red',
  '/organizations?search=shelter+clinic&facets=colors,tax_status&per_page=3&page=2',
  '/organizations?format=ndjson&search=shelter+clinic',
  '/organizations?facets=colors:1,tax_status',
  '/organizations?taxonomy_term_id=colors:red&facets=colors',
  '/organizations?tax_status=501c3',
  '/organizations?tax_status=501(c)(3)&taxonomy_term_id=colors:red&facets=tax_status',
  '/organizations?tax_status=nothing',
  '/organizations?format=ndjson&search=the',
  '/organizations?modified_after=2026-01-01',
  '/organizations?modified_after=2026-03-01T12:00:00Z&search=helps',
  '/organizations?modified_after=2099-01-01',
  '/organizations?format=ndjson',
  '/organizations?format=ndjson&search=helps&full=true',
  // The tabular package: the same archive, byte for byte, from each store.
  '/datapackage.zip',
  '/organizations?format=ndjson&taxonomy_term_id=colors:blue',
  `/organizations/${organizationId('NAT-001')}`,
  '/organizations/NAT-002',
  '/organizations/not-there',
  '/taxonomy_terms?search=of',
  '/organizations/01-0211530?x=1',
  '/organizations/10211530',
  '/organizations/99-0211530',
  '/taxonomies',
  '/taxonomies/COLORS?x=1',
  '/taxonomies/nope',
  '/taxonomies?search=demo',
  '/taxonomies?search=color&format=ndjson',
  '/taxonomy_terms',
  '/taxonomy_terms?per_page=7&page=4',
  '/taxonomy_terms?taxonomy=colors&search=the+color',
  '/taxonomy_terms?parent_id=things:A',
  '/taxonomy_terms?top_only=true&taxonomy_id=things',
  '/taxonomy_terms?search=thing+a',
  '/taxonomy_terms?format=ndjson&taxonomy=Colors',
  `/taxonomy_terms/${red}`,
  '/taxonomy_terms/Colors:RED',
  '/taxonomy_terms/none:such',
  `/taxonomy_terms/${taxonomyTermId(outsideTaxonomy('elsewhere'), 'loose')}`,
  `/organizations?taxonomy_term_id=${taxonomyTermId(outsideTaxonomy('elsewhere'), 'loose')}&full=true`,
  '/taxonomy_terms?search=loose',
  '/taxonomy_terms/THINGS%3Aa?x=1',
  '/organizations?page=0',
  '/changes',
  '/changes?since=0',
  '/changes?since=0123456789abcdef',
  '/changes?since=yesterday',
];

