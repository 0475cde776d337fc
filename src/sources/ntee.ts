import { RowFields } from './files/fields.ts';
import { readRows } from './files/rows.ts';
import type { ReadContext, Source } from './source.ts';
import { NTEE_TAXONOMY } from '../hsds/known-taxonomies.ts';
import type { TaxonomyTermRecord } from '../hsds/records.ts';

const COLUMNS = { required: ['code', 'title', 'definition', 'parent_code'] };

/** Reads `ntee_codes.csv`: major groups first-level, codes under their derived parent. */
export async function readNteeTerms(file: string, context: ReadContext): Promise<TaxonomyTermRecord[]> {
  const terms: TaxonomyTermRecord[] = [];
  for await (const row of readRows(file, COLUMNS, context)) {
    const fields = new RowFields(file, row, context.diagnostics);
    const term: TaxonomyTermRecord = {
      taxonomy: NTEE_TAXONOMY.code,
      code: fields.required('code', 'code'),
      name: fields.required('title', 'name'),
      description: fields.optional('definition', 'description') ?? '',
      parentCode: fields.optionalId('parent_code', 'code'),
      at: fields.at(),
    };
    if (fields.valid) terms.push(term);
  }
  return terms;
}

/** The NTEE code list in the shape shipped in data/ntee. */
export function nteeSource(file: string): Source {
  return {
    kind: 'ntee',
    path: file,
    files: [file],
    taxonomies: async () => [{ ...NTEE_TAXONOMY, at: { file } }],
    terms: (context) => readNteeTerms(file, context),
  };
}
