/**
 * Facets: how the organizations of a list spread over the terms of a taxonomy at one depth (NTEE
 * major groups at depth 1) and over tax statuses. Each organization's facet values are written at
 * publish (organization_facets: facet TAX_STATUS_FACET, or termFacet(taxonomy, depth)), those of
 * the unfiltered list counted then too (facet_counts); a filtered list is counted when asked.
 */

export const TAX_STATUS_FACET = 0;
/** Deepest level a term facet counts at. */
export const MAX_FACET_DEPTH = 99;

export const termFacet = (taxonomyPosition: number, depth: number): number => taxonomyPosition * (MAX_FACET_DEPTH + 1) + depth;

/** A facet asked for: `tax_status`, or a taxonomy (id or code) and a depth (1 is the top level). */
export type FacetRequest = { kind: 'tax_status' } | { kind: 'taxonomy'; taxonomy: string; depth: number };

export interface TermFacetValue {
  id: string;
  code: string;
  name: string;
  count: number;
}

export interface TaxStatusFacetValue {
  value: string;
  count: number;
}

/** Facets by name (`tax_status`, or `<taxonomy code>:<depth>`), each its values by count, then code or value. */
export type Facets = Record<string, (TermFacetValue | TaxStatusFacetValue)[]>;

/** Organizations of a list with one value of one facet. */
export interface FacetCount {
  facet: number;
  value: number;
  count: number;
}

/** What a facet's values are called, read once when a dataset is opened. */
export interface FacetLabels {
  terms: Map<number, { id: string; code: string; name: string; taxonomyPosition: number }>;
  taxStatuses: Map<number, string>;
}

/** A tax status as compared: letters and digits only, lower case (`501c3` is `501(c)(3)`). */
export const taxStatusKey = (value: string): string => value.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** The position of a tax status, given in any case and with any punctuation. */
export function findTaxStatus(labels: FacetLabels, value: string): number | undefined {
  const wanted = taxStatusKey(value);
  for (const [position, served] of labels.taxStatuses) if (taxStatusKey(served) === wanted) return position;
  return undefined;
}

/** Rows of taxonomy_terms (position, id, code and listed JSON) and tax_statuses, as labels. */
export function facetLabels(
  terms: Iterable<{ position: number; id: string; code: string; taxonomy_position: number; json: string }>,
  taxStatuses: Iterable<{ position: number; value: string }>,
): FacetLabels {
  return {
    terms: new Map(
      [...terms].map((row) => [row.position, { id: row.id, code: row.code, name: (JSON.parse(row.json) as { name: string }).name, taxonomyPosition: Number(row.taxonomy_position) }]),
    ),
    taxStatuses: new Map([...taxStatuses].map((row) => [row.position, row.value])),
  };
}

/** Counted values of one facet (value positions), labelled and ordered: most organizations first. */
export function labelled(labels: FacetLabels, request: FacetRequest, counts: readonly Pick<FacetCount, 'value' | 'count'>[]): (TermFacetValue | TaxStatusFacetValue)[] {
  if (request.kind === 'tax_status') {
    return counts
      .map(({ value, count }) => ({ value: labels.taxStatuses.get(value)!, count: Number(count) }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  }
  return counts
    .map(({ value, count }) => {
      const { id, code, name } = labels.terms.get(value)!;
      return { id, code, name, count: Number(count) };
    })
    .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}
