import { ParameterError } from '../problem.ts';
import type { Store } from '../../store/store.ts';

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
