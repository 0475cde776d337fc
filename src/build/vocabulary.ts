import { renderTaxonomy, renderTerm, termIdOf } from '../hsds/render.ts';
import type { RenderedTaxonomy, RenderedTerm } from '../hsds/render.ts';
import { isOutsideTaxonomy, outsideTaxonomy, termKey } from '../hsds/records.ts';
import type { SourceLocation, TaxonomyRecord, TaxonomyTermRecord } from '../hsds/records.ts';
import type { Diagnostics } from '../sources/files/diagnostics.ts';

export interface RenderedVocabulary {
  /** In list order (by code). */
  taxonomies: RenderedTaxonomy[];
  /** Terms of each taxonomy code, in source order; those of no taxonomy of the dataset under OUTSIDE_TERMS. */
  termsByTaxonomy: Map<string, RenderedTerm[]>;
  termByKey: Map<string, RenderedTerm>;
}

const where = (record: { at?: SourceLocation }, field?: string): SourceLocation => ({ file: '(input)', ...record.at, field });

const describe = (at: SourceLocation | undefined): string => (at === undefined ? '' : ` (first at ${at.file}${at.line === undefined ? '' : `:${at.line}`})`);

/** Where RenderedVocabulary.termsByTaxonomy keeps the terms of no taxonomy of the dataset. */
export const OUTSIDE_TERMS = outsideTaxonomy(undefined);

const describeTerm = (term: TaxonomyTermRecord): string => (isOutsideTaxonomy(term.taxonomy) ? `"${term.code}"` : `${term.taxonomy}:${term.code}`);

/** Terms in a parent cycle, or (in the native format) whose parent chain is broken, are reported and left out; so are repeats of a term. */
function checkTermTree(terms: readonly TaxonomyTermRecord[], diagnostics: Diagnostics): TaxonomyTermRecord[] {
  const byKey = new Map<string, TaxonomyTermRecord>();
  for (const term of terms) {
    const key = termKey(term.taxonomy, term.code);
    const first = byKey.get(key);
    if (first !== undefined) {
      diagnostics.error(where(term, 'code'), `taxonomy term ${describeTerm(term)} is defined twice${describe(first.at)}`);
      continue;
    }
    byKey.set(key, term);
  }
  const broken = new Set<TaxonomyTermRecord>();
  for (const term of byKey.values()) {
    const seen = new Set<TaxonomyTermRecord>([term]);
    for (let current: TaxonomyTermRecord = term; current.parentCode !== undefined; ) {
      const parent = byKey.get(termKey(current.taxonomy, current.parentCode));
      // A parent that is not in the input ends the chain: served as given (see renderTerm) where references may dangle, else an error.
      if (parent === undefined) {
        if (current === term) {
          const at = where(term, term.parentField ?? 'parent_code');
          if (term.lenientReferences === true) {
            diagnostics.danglingReference(at, `taxonomy term ${describeTerm(term)} names parent ${term.parentCode}, which is not in the input; served as given`, 'term whose parent is not in the input');
          } else {
            diagnostics.danglingReference(at, `taxonomy term ${describeTerm(term)} names parent ${term.parentCode}, which does not exist`);
          }
        }
        if (term.lenientReferences !== true) broken.add(term);
        break;
      }
      if (seen.has(parent)) {
        diagnostics.error(where(term, term.parentField ?? 'parent_code'), `taxonomy term ${describeTerm(term)} is in a parent cycle`);
        broken.add(term);
        break;
      }
      seen.add(parent);
      current = parent;
    }
  }
  return [...byKey.values()].filter((term) => !broken.has(term));
}

/** Checks and renders all taxonomies and terms; problems go to `diagnostics`. */
export function renderVocabulary(
  taxonomyRecords: readonly TaxonomyRecord[],
  termRecords: readonly TaxonomyTermRecord[],
  diagnostics: Diagnostics,
): RenderedVocabulary {
  const sorted = [...taxonomyRecords].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  const byCode = new Map<string, RenderedTaxonomy>();
  // Codes are matched case-insensitively in requests, so they must be unique that way.
  const firstByLowerCaseCode = new Map<string, TaxonomyRecord>();
  for (const taxonomy of sorted) {
    const first = firstByLowerCaseCode.get(taxonomy.code.toLowerCase());
    if (first !== undefined) {
      diagnostics.error(where(taxonomy, 'code'), `taxonomy ${taxonomy.code} is defined twice (codes are case-insensitive)${describe(first.at)}`);
      continue;
    }
    firstByLowerCaseCode.set(taxonomy.code.toLowerCase(), taxonomy);
    byCode.set(taxonomy.code, renderTaxonomy(taxonomy));
  }
  const known = termRecords.filter((term) => {
    if (isOutsideTaxonomy(term.taxonomy) || byCode.has(term.taxonomy)) return true;
    diagnostics.danglingReference(where(term, 'taxonomy'), `taxonomy term ${term.code} names taxonomy ${term.taxonomy}, which does not exist`);
    return false;
  });
  const checked = checkTermTree(known, diagnostics);
  const idByKey = new Map(checked.map((term) => [termKey(term.taxonomy, term.code), termIdOf(term)]));
  // Terms of no taxonomy of the dataset come last.
  const termsByTaxonomy = new Map<string, RenderedTerm[]>([...byCode.keys(), OUTSIDE_TERMS].map((code) => [code, []]));
  const termByKey = new Map<string, RenderedTerm>();
  for (const term of checked) {
    const parentId = term.parentCode === undefined ? undefined : idByKey.get(termKey(term.taxonomy, term.parentCode));
    const rendered = renderTerm(term, byCode.get(term.taxonomy), parentId);
    termsByTaxonomy.get(isOutsideTaxonomy(term.taxonomy) ? OUTSIDE_TERMS : term.taxonomy)!.push(rendered);
    termByKey.set(termKey(term.taxonomy, term.code), rendered);
  }
  return { taxonomies: [...byCode.values()], termsByTaxonomy, termByKey };
}
