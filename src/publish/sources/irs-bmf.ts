import { optional, readCsv } from '../csv.ts';
import { NTEE_TAXONOMY } from './ntee.ts';
import type { NteeCrosswalk } from './ntee-crosswalk.ts';
import type { OrganizationRecord, TagRecord } from '../../hsds/records.ts';

/**
 * The IRS Exempt Organizations Business Master File (state CSVs as the IRS publishes them).
 * Only organization-level facts are read. ICO ("in care of", often a private person) and the street
 * address are never read, so they cannot reach a response.
 */

const REQUIRED_COLUMNS = ['EIN', 'NAME', 'SUBSECTION', 'ORGANIZATION', 'NTEE_CD', 'SORT_NAME'] as const;

const LEGAL_STATUS: Record<string, string> = {
  '1': 'Corporation',
  '2': 'Trust',
  '3': 'Co-operative',
  '4': 'Partnership',
  '5': 'Association',
};

export interface IrsReadReport {
  organizations: number;
  /** NTEE_CD values that match no NTEE code, with how many organizations carry each. */
  unknownNteeCodes: Map<string, number>;
}

export interface IrsReadContext {
  nteeCodes: ReadonlySet<string>;
  crosswalk: NteeCrosswalk;
  /** SUBSECTION code → tax status text, e.g. "03" → "501(c)(3)". */
  taxStatusBySubsection: ReadonlyMap<string, string>;
}

/** Reads the SUBSECTION table of `bmf_code_values.csv` ("IRC 501(c)(3)" → "501(c)(3)"). */
export async function readSubsectionTaxStatuses(file: string): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  for await (const { fields } of readCsv(file, ['field', 'code', 'description'])) {
    const description = fields.description!.trim();
    if (fields.field === 'SUBSECTION' && description.startsWith('IRC ')) {
      statuses.set(fields.code!.trim(), description.slice('IRC '.length));
    }
  }
  return statuses;
}

function nteeTag(rawCode: string | undefined, context: IrsReadContext, report: IrsReadReport): TagRecord | undefined {
  if (rawCode === undefined) return undefined;
  const code = rawCode.slice(0, 3).toUpperCase();
  if (code.length === 3 && context.nteeCodes.has(code)) return { taxonomy: NTEE_TAXONOMY.code, code };
  report.unknownNteeCodes.set(rawCode, (report.unknownNteeCodes.get(rawCode) ?? 0) + 1);
  return undefined;
}

export async function* readIrsOrganizations(
  files: readonly string[],
  context: IrsReadContext,
  report: IrsReadReport,
): AsyncGenerator<OrganizationRecord> {
  for (const file of files) {
    for await (const { fields } of readCsv(file, REQUIRED_COLUMNS)) {
      const ein = fields.EIN!.trim();
      const ntee = nteeTag(optional(fields, 'NTEE_CD'), context, report);
      const tags = ntee === undefined ? [] : [ntee, ...context.crosswalk.tagsFor(ntee.code)];
      report.organizations++;
      yield {
        externalId: ein,
        status: 'published',
        name: fields.NAME!.trim(),
        alternateName: optional(fields, 'SORT_NAME'),
        taxStatus: context.taxStatusBySubsection.get(fields.SUBSECTION!.trim()),
        taxId: ein,
        legalStatus: LEGAL_STATUS[fields.ORGANIZATION!.trim()],
        identifiers: [{ scheme: 'US-EIN', type: 'Employer Identification Number', identifier: ein }],
        tags,
      };
    }
  }
}
