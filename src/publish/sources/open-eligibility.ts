import { SourceError, optional, readCsv } from '../csv.ts';
import type { TaxonomyRecord, TaxonomyTermRecord } from '../../hsds/records.ts';

const ABOUT =
  'Open Eligibility v2.0, the open human services taxonomy by Aunt Bertha (now findhelp), CC BY-SA 3.0.';

export const OE_SERVICES_TAXONOMY: TaxonomyRecord = {
  code: 'oe_services',
  name: 'Open Eligibility: Human Services',
  description: `The services facet: what an organization or service provides (Food, Housing, Health, ...). ${ABOUT}`,
  uri: 'https://github.com/auntbertha/openeligibility',
  version: '2.0',
};

export const OE_SITUATIONS_TAXONOMY: TaxonomyRecord = {
  code: 'oe_situations',
  name: 'Open Eligibility: Human Situations',
  description: `The situations facet: who a service is for (age groups, veterans, disabilities, ...). ${ABOUT}`,
  uri: 'https://github.com/auntbertha/openeligibility',
  version: '2.0',
};

export const OE_TAXONOMY_BY_FACET: Record<string, TaxonomyRecord> = {
  services: OE_SERVICES_TAXONOMY,
  situations: OE_SITUATIONS_TAXONOMY,
};

/**
 * Reads `open_eligibility_v2_terms.csv` (rows in depth-first source order).
 *
 * The v2.0 release reuses id 1206 for "Medical Care" and its child "Primary Care". Rule: the first
 * occurrence of an id in source order keeps it; the n-th later occurrence becomes `<id>-<n>` (so
 * Primary Care is `1206-2`). A `parent_id` names the nearest preceding term with that id other than
 * the row itself, which in depth-first order is the parent.
 */
export async function readOpenEligibilityTerms(file: string): Promise<TaxonomyTermRecord[]> {
  const terms: TaxonomyTermRecord[] = [];
  const occurrences = new Map<string, number>();
  const latestCodeOf = new Map<string, string>();
  for await (const { fields, line } of readCsv(file, ['id', 'name', 'parent_id', 'facet', 'description'])) {
    const taxonomy = OE_TAXONOMY_BY_FACET[fields.facet!.trim()];
    if (taxonomy === undefined) throw new SourceError(file, line, `facet must be services or situations, got "${fields.facet}"`);
    const officialId = fields.id!.trim();
    const key = `${taxonomy.code}:${officialId}`;
    const occurrence = (occurrences.get(key) ?? 0) + 1;
    occurrences.set(key, occurrence);
    const code = occurrence === 1 ? officialId : `${officialId}-${occurrence}`;
    const parentId = optional(fields, 'parent_id');
    const parentCode = parentId === undefined ? undefined : latestCodeOf.get(`${taxonomy.code}:${parentId}`);
    if (parentId !== undefined && parentCode === undefined) {
      throw new SourceError(file, line, `parent_id ${parentId} does not name an earlier term`);
    }
    latestCodeOf.set(key, code);
    terms.push({ taxonomy: taxonomy.code, code, name: fields.name!.trim(), description: optional(fields, 'description') ?? '', parentCode });
  }
  return terms;
}
