import { ParameterError } from './problem.ts';
import type { Store } from '../store/store.ts';

/**
 * Filter values that name a taxonomy or a term, by HSDS id or by code, resolved to ids. A value that
 * names nothing is the caller's mistake (a 400 saying what is accepted), not an empty list.
 */

export async function taxonomyIdOf(store: Store, parameter: string, value: unknown): Promise<string | undefined> {
  if (typeof value !== 'string') return undefined;
  const taxonomy = await store.findTaxonomy(value);
  if (taxonomy !== undefined) return taxonomy.id;
  const codes = await store.taxonomyCodes();
  throw new ParameterError(parameter, `must be a taxonomy id or one of the codes ${codes.join(', ')}`);
}

export async function termOf(store: Store, parameter: string, value: unknown) {
  if (typeof value !== 'string') return undefined;
  const term = await store.findTaxonomyTerm(value);
  if (term !== undefined) return term;
  throw new ParameterError(parameter, 'must be a taxonomy term id, or a taxonomy code and a term code as in ntee:P20, naming a term of this dataset');
}

export const TERM_REFERENCE = 'A taxonomy term, by id or as `taxonomy:code` (e.g. `ntee:P20`; the taxonomy code in any case).';
export const TAXONOMY_REFERENCE = 'A taxonomy, by id or by code (e.g. `ntee`), in any case.';

/**
 * Path values that name a document in place of its UUID (answered with a 308 to the canonical URL;
 * see by-id). Each resolves to the HSDS id, or undefined when the value names nothing.
 */

const EIN = /^(?:(\d{2})-(\d{7})|0*(\d{1,9}))$/;

/**
 * An EIN as people write it, in the form the IRS files (and so the native ids) have: 9 digits.
 * Accepted: the digits with a dash after the second (`90-0897473`), and the digits without leading
 * zeros (`10211530`, as a spreadsheet keeps `010211530`) or with more of them (`0900897473`): fewer
 * than 9 digits are padded with zeros on the left, more lose the extra leading zeros. Undefined for
 * anything else (letters, another dash, more than 9 digits after the leading zeros).
 */
export function canonicalEin(value: string): string | undefined {
  const match = EIN.exec(value);
  if (match === null) return undefined;
  return (match[3] ?? `${match[1]}${match[2]}`).padStart(9, '0');
}

/**
 * An organization by native id: the value exactly as given first (a publisher's own native ids may
 * be numbers too), then, only when no published organization has it, as an EIN in canonical form.
 * Each value has one canonical form, so there is never more than one candidate: where the value is
 * one organization's native id and its canonical EIN another's (`10211530` and `010211530`), the
 * exact one is answered.
 */
export async function organizationIdOfNativeId(store: Store, value: string): Promise<string | undefined> {
  const exact = await store.organizationIdByNativeId(value);
  if (exact !== undefined) return exact;
  const ein = canonicalEin(value);
  return ein === undefined || ein === value ? undefined : store.organizationIdByNativeId(ein);
}

/** A taxonomy by code, in any case (or by id in any case, which the route never asks: a UUID is its own). */
export const taxonomyIdOfCode = async (store: Store, value: string): Promise<string | undefined> => (await store.findTaxonomy(value))?.id;

/** A term as `taxonomy:code`: the taxonomy code in any case, the term code exactly, else in any case. */
export const termIdOfCode = async (store: Store, value: string): Promise<string | undefined> => (await store.findTaxonomyTerm(value))?.id;
