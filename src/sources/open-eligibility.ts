import { RowFields } from './files/fields.ts';
import { readRows } from './files/rows.ts';
import type { ReadContext, Source } from './source.ts';
import { OE_SERVICES_TAXONOMY, OE_SITUATIONS_TAXONOMY } from '../hsds/known-taxonomies.ts';
import type { TaxonomyRecord, TaxonomyTermRecord } from '../hsds/records.ts';

export const OE_TAXONOMY_BY_FACET: Record<string, TaxonomyRecord> = {
  services: OE_SERVICES_TAXONOMY,
  situations: OE_SITUATIONS_TAXONOMY,
};

const COLUMNS = { required: ['id', 'name', 'parent_id', 'facet', 'level', 'description'] };

/**
 * Reads `open_eligibility_v2_terms.csv` (rows in depth-first source order, `level` 1 at the top).
 *
 * The v2.0 release reuses id 1206 for "Medical Care" (level 2) and its child "Primary Care" (level 3).
 * Rule: the first occurrence of an id in source order keeps it; the n-th later occurrence becomes
 * `<id>-<n>` (so Primary Care is `1206-2`). The parent of a term is the nearest preceding term of its
 * facet with the id in `parent_id` and a lower `level`, which in depth-first order is the parent: so
 * Primary Care and its siblings (1207 Alternative Medicine, ...) are all under Medical Care, though
 * Primary Care also has the id 1206 and comes first. (Lower, not one less: `level` is the XML
 * element's name, and 1170 Assistive Technology is a third_level right under the top-level Goods.)
 */
export async function readOpenEligibilityTerms(file: string, context: ReadContext): Promise<TaxonomyTermRecord[]> {
  const terms: TaxonomyTermRecord[] = [];
  const occurrences = new Map<string, number>();
  /** `<taxonomy>:<official id>` → the terms read with that id, in source order. */
  const termsWithId = new Map<string, { level: number; code: string }[]>();
  for await (const row of readRows(file, COLUMNS, context)) {
    const fields = new RowFields(file, row, context.diagnostics);
    const facet = fields.oneOf('facet', ['services', 'situations'] as const);
    const officialId = fields.required('id', 'code');
    const name = fields.required('name', 'name');
    const description = fields.optional('description', 'description') ?? '';
    const parentId = fields.optionalId('parent_id', 'code');
    const levelText = fields.required('level', 'text');
    const level = /^[1-9]\d{0,2}$/.test(levelText) ? Number(levelText) : undefined;
    if (level === undefined && levelText !== '') fields.error('level', `must be a whole number from 1 (a top-level term), got "${levelText}"`);
    if (!fields.valid || facet === undefined || level === undefined) continue;
    const taxonomy = OE_TAXONOMY_BY_FACET[facet]!;
    const key = `${taxonomy.code}:${officialId}`;
    const occurrence = (occurrences.get(key) ?? 0) + 1;
    occurrences.set(key, occurrence);
    const code = occurrence === 1 ? officialId : `${officialId}-${occurrence}`;
    const parentCode = parentId === undefined ? undefined : termsWithId.get(`${taxonomy.code}:${parentId}`)?.findLast((term) => term.level < level)?.code;
    if (parentId !== undefined && parentCode === undefined) {
      fields.error('parent_id', `parent ${parentId} does not name an earlier term of the ${facet} facet with a level below ${level}`);
      continue;
    }
    const sameId = termsWithId.get(key);
    if (sameId === undefined) termsWithId.set(key, [{ level, code }]);
    else sameId.push({ level, code });
    terms.push({ taxonomy: taxonomy.code, code, name, description, parentCode, at: fields.at(), parentField: 'parent_id' });
  }
  return terms;
}

/** The Open Eligibility term list in the shape shipped in data/open-eligibility: two taxonomies, one per facet. */
export function openEligibilitySource(file: string): Source {
  return {
    kind: 'open-eligibility',
    path: file,
    files: [file],
    taxonomies: async () => [OE_SERVICES_TAXONOMY, OE_SITUATIONS_TAXONOMY].map((taxonomy) => ({ ...taxonomy, at: { file } })),
    terms: (context) => readOpenEligibilityTerms(file, context),
  };
}
