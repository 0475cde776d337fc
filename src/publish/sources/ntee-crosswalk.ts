import { SourceError, readCsv } from '../csv.ts';
import { OE_TAXONOMY_BY_FACET } from './open-eligibility.ts';
import type { TagRecord, TaxonomyTermRecord } from '../../hsds/records.ts';

/**
 * The project's derived NTEE → Open Eligibility crosswalk (data/crosswalk). For an NTEE code, the rows
 * of the most specific level that has any apply: the code itself, else its parent, else the major group.
 */
export class NteeCrosswalk {
  private readonly rowsByNteeCode: Map<string, TagRecord[]>;
  private readonly parentOf: Map<string, string | undefined>;

  constructor(rowsByNteeCode: Map<string, TagRecord[]>, nteeTerms: readonly TaxonomyTermRecord[]) {
    this.rowsByNteeCode = rowsByNteeCode;
    this.parentOf = new Map(nteeTerms.map((term) => [term.code, term.parentCode]));
  }

  tagsFor(nteeCode: string): TagRecord[] {
    for (let code: string | undefined = nteeCode; code !== undefined; code = this.parentOf.get(code)) {
      const rows = this.rowsByNteeCode.get(code);
      if (rows !== undefined) return rows;
    }
    return [];
  }
}

export async function readNteeCrosswalk(file: string, nteeTerms: readonly TaxonomyTermRecord[]): Promise<NteeCrosswalk> {
  const rows = new Map<string, TagRecord[]>();
  for await (const { fields, line } of readCsv(file, ['ntee_code', 'oe_facet', 'oe_code'])) {
    const taxonomy = OE_TAXONOMY_BY_FACET[fields.oe_facet!.trim()];
    if (taxonomy === undefined) throw new SourceError(file, line, `oe_facet must be services or situations`);
    const nteeCode = fields.ntee_code!.trim();
    const list = rows.get(nteeCode) ?? [];
    list.push({ taxonomy: taxonomy.code, code: fields.oe_code!.trim() });
    rows.set(nteeCode, list);
  }
  return new NteeCrosswalk(rows, nteeTerms);
}
