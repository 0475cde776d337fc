import { findTaxStatus } from './facets.ts';
import type { FacetLabels } from './facets.ts';
import { queryWords } from './search-text.ts';
import type { OrganizationFilter, SearchWords, TaxonomyRef, TaxonomyTermRef } from './store.ts';

/**
 * Backend-neutral steps of answering a filter, the same for every Store: which membership list a
 * term or taxonomy filter reads, when a `modifiedSince` selects all or nothing, how a term reference
 * resolves. Each backend supplies its lookups.
 */

export interface TaxonomyRow extends TaxonomyRef {
  position: number;
}

export interface TermRow extends TaxonomyTermRef {
  position: number;
  taxonomy_position: number;
}

/** A precomputed membership list: organizations of one term, subtree, taxonomy or tax status, densely numbered. */
export interface Membership {
  table: 'organization_terms' | 'organization_taxonomies' | 'organization_subtrees' | 'organization_tax_statuses';
  group: 'term' | 'taxonomy' | 'subtree' | 'tax_status';
  key: number;
}

/** The oldest and newest `last_modified` of a dataset (null when it has no organizations). */
export interface ModifiedRange {
  oldest: string | null;
  newest: string | null;
}

/** A taxonomy by id or by code, case-insensitively. */
export function findTaxonomyRow(rows: readonly TaxonomyRow[], idOrCode: string): TaxonomyRow | undefined {
  const wanted = idOrCode.toLowerCase();
  return rows.find((candidate) => candidate.id === wanted || candidate.code.toLowerCase() === wanted);
}

/**
 * The membership lists behind a filter's term, taxonomy and tax status (the organizations in all of
 * them): none when there is no such filter, 'none' when it can match nothing (an unknown id or tax
 * status, or a term of another taxonomy).
 */
export async function membershipsOf(
  filter: OrganizationFilter,
  taxonomies: readonly TaxonomyRow[],
  termById: (id: string) => Promise<TermRow | undefined>,
  labels: FacetLabels,
): Promise<Membership[] | 'none'> {
  const byTerm = await termMembershipOf(filter, taxonomies, termById);
  if (byTerm === 'none') return 'none';
  const memberships = byTerm === undefined ? [] : [byTerm];
  if (filter.taxStatus !== undefined) {
    const taxStatus = findTaxStatus(labels, filter.taxStatus);
    if (taxStatus === undefined) return 'none';
    memberships.push({ table: 'organization_tax_statuses', group: 'tax_status', key: taxStatus });
  }
  return memberships;
}

/** The membership list behind a term and/or taxonomy filter (see membershipsOf). */
async function termMembershipOf(
  filter: OrganizationFilter,
  taxonomies: readonly TaxonomyRow[],
  termById: (id: string) => Promise<TermRow | undefined>,
): Promise<Membership | 'none' | undefined> {
  const taxonomy = filter.taxonomyId === undefined ? undefined : taxonomies.find((row) => row.id === filter.taxonomyId);
  if (filter.taxonomyId !== undefined && taxonomy === undefined) return 'none';
  if (filter.taxonomyTermId !== undefined) {
    const term = await termById(filter.taxonomyTermId);
    if (term === undefined || (taxonomy !== undefined && taxonomy.position !== term.taxonomy_position)) return 'none';
    if (filter.includeDescendants === true) return { table: 'organization_subtrees', group: 'subtree', key: term.position };
    return { table: 'organization_terms', group: 'term', key: term.position };
  }
  return taxonomy === undefined ? undefined : { table: 'organization_taxonomies', group: 'taxonomy', key: taxonomy.position };
}

/** A search whose every word is a stop word (search-text.ts): no index holds one, so it matches nothing. */
export const searchesNothing = (search: SearchWords | undefined): boolean => search !== undefined && queryWords(search).length === 0;

/**
 * The same filter without a `modifiedSince` that every organization meets (say, the time of a
 * first sync), so the list can be served by position; undefined when no organization meets it (or
 * the search is of stop words only).
 */
export function simplifiedFilter(filter: OrganizationFilter, range: ModifiedRange): OrganizationFilter | undefined {
  if (searchesNothing(filter.search)) return undefined;
  const since = filter.modifiedSince;
  if (since === undefined) return filter;
  const { oldest, newest } = range;
  if (newest === null || since > newest) return undefined;
  return oldest !== null && since <= oldest ? { ...filter, modifiedSince: undefined } : filter;
}

/**
 * A search and nothing else: its matches are those of the text index alone (SQLite counts them
 * there, or takes a stored count for one token; PostgreSQL reads them from its posting lists).
 */
export const isSearchAlone = (filter: OrganizationFilter, memberships: readonly Membership[]): boolean =>
  memberships.length === 0 && filter.modifiedSince === undefined;

/** Conditions that a row's organization (at SQL `position`) is in each membership list; `table` names a table in the backend's SQL. */
export function membershipConditions<Param>(memberships: readonly Membership[], position: string, table: (name: string) => string = (name) => name) {
  return {
    where: memberships.map(
      (membership, index) =>
        `EXISTS (SELECT 1 FROM ${table(membership.table)} m${index} WHERE m${index}.${membership.group}_position = ? AND m${index}.organization_position = ${position})`,
    ),
    params: memberships.map((membership) => membership.key as Param),
  };
}

export interface TermLookups {
  byId(id: string): Promise<TermRow | undefined>;
  /** The term of this taxonomy with exactly this code. */
  byCode(taxonomyPosition: number, code: string): Promise<TermRow | undefined>;
  /** The first term of this taxonomy whose code equals this one in ASCII case-insensitive comparison. */
  byCodeAnyCase(taxonomyPosition: number, code: string): Promise<TermRow | undefined>;
}

/**
 * Resolves a term by id, or by `taxonomy:code` (the taxonomy code in any case; the term code
 * exactly, else in any case). A taxonomy code may itself hold a colon: every taxonomy whose code
 * prefixes the value is tried.
 */
export async function findTermRow(idOrCode: string, taxonomies: readonly TaxonomyRow[], lookups: TermLookups): Promise<TaxonomyTermRef | undefined> {
  const lowerCase = idOrCode.toLowerCase();
  let row = await lookups.byId(lowerCase);
  for (const taxonomy of taxonomies) {
    if (row !== undefined) break;
    if (!lowerCase.startsWith(`${taxonomy.code.toLowerCase()}:`)) continue;
    const code = idOrCode.slice(taxonomy.code.length + 1);
    row = (await lookups.byCode(taxonomy.position, code)) ?? (await lookups.byCodeAnyCase(taxonomy.position, code));
  }
  return row === undefined ? undefined : { id: row.id, taxonomyId: row.taxonomyId };
}
