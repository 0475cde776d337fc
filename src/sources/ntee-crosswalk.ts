import { RowFields } from './files/fields.ts';
import { readRows } from './files/rows.ts';
import { NTEE_TAXONOMY } from '../hsds/known-taxonomies.ts';
import { OE_TAXONOMY_BY_FACET } from './open-eligibility.ts';
import type { ReadContext, Source, Vocabulary } from './source.ts';
import type { TagRecord } from '../hsds/records.ts';

const COLUMNS = { required: ['ntee_code', 'oe_facet', 'oe_code'] };

/**
 * The project's derived NTEE → Open Eligibility crosswalk (data/crosswalk). An organization tagged
 * with an NTEE code also gets the Open Eligibility tags of the most specific level that has rows:
 * the code itself, else its parent, else the major group.
 */
export async function readNteeCrosswalk(file: string, context: ReadContext, vocabulary: Vocabulary) {
  const rowsByNteeCode = new Map<string, TagRecord[]>();
  for await (const row of readRows(file, COLUMNS, context)) {
    const fields = new RowFields(file, row, context.diagnostics);
    const facet = fields.oneOf('oe_facet', ['services', 'situations'] as const);
    const nteeCode = fields.required('ntee_code', 'code');
    const oeCode = fields.required('oe_code', 'code');
    if (!fields.valid || facet === undefined) continue;
    const taxonomy = OE_TAXONOMY_BY_FACET[facet]!.code;
    if (!vocabulary.hasTerm(NTEE_TAXONOMY.code, nteeCode)) fields.error('ntee_code', `${nteeCode} is not a known NTEE term`);
    if (!vocabulary.hasTerm(taxonomy, oeCode)) fields.error('oe_code', `${oeCode} is not a known ${taxonomy} term`);
    if (!fields.valid) continue;
    const list = rowsByNteeCode.get(nteeCode) ?? [];
    list.push({ taxonomy, code: oeCode });
    rowsByNteeCode.set(nteeCode, list);
  }
  const none: readonly TagRecord[] = [];
  return (tag: TagRecord): readonly TagRecord[] => {
    if (tag.taxonomy !== NTEE_TAXONOMY.code) return none;
    for (let code: string | undefined = tag.code; code !== undefined; code = vocabulary.parentOf(NTEE_TAXONOMY.code, code)) {
      const rows = rowsByNteeCode.get(code);
      if (rows !== undefined) return rows;
    }
    return none;
  };
}

export function nteeCrosswalkSource(file: string): Source {
  return {
    kind: 'ntee-crosswalk',
    path: file,
    files: [file],
    impliedTags: (context, vocabulary) => readNteeCrosswalk(file, context, vocabulary),
  };
}
