import { optional, readCsv } from '../csv.ts';
import type { TaxonomyRecord, TaxonomyTermRecord } from '../../hsds/records.ts';

export const NTEE_TAXONOMY: TaxonomyRecord = {
  code: 'ntee',
  name: 'National Taxonomy of Exempt Entities (NTEE-CC)',
  description:
    'The NTEE core codes used by the IRS and the National Center for Charitable Statistics to classify exempt organizations: 26 major groups (A-Z) and their three-character codes.',
  uri: 'https://github.com/Nonprofit-Open-Data-Collective/mission-taxonomies',
  version: 'NTEE-CC',
};

/** Reads `ntee_codes.csv`: major groups first-level, codes under their derived parent. */
export async function readNteeTerms(file: string): Promise<TaxonomyTermRecord[]> {
  const terms: TaxonomyTermRecord[] = [];
  for await (const { fields } of readCsv(file, ['code', 'title', 'definition', 'parent_code'])) {
    terms.push({
      taxonomy: NTEE_TAXONOMY.code,
      code: fields.code!.trim(),
      name: fields.title!.trim(),
      description: optional(fields, 'definition') ?? '',
      parentCode: optional(fields, 'parent_code'),
    });
  }
  return terms;
}
