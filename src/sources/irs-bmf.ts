import { RowFields } from './files/fields.ts';
import { readRows } from './files/rows.ts';
import { sortNameOmission } from './irs-sort-name.ts';
import { NTEE_TAXONOMY } from '../hsds/known-taxonomies.ts';
import type { ReadContext, Source, Vocabulary } from './source.ts';
import type { OrganizationRecord, TagRecord } from '../hsds/records.ts';

/**
 * The IRS Exempt Organizations Business Master File (state CSVs as the IRS publishes them).
 * Only organization-level facts are read. ICO ("in care of", often a private person) and the street
 * address are never read, so they cannot reach a response. SORT_NAME is served as the alternate name
 * only when it names the organization (see irs-sort-name.ts); each value left out is counted as a note.
 */

const COLUMNS = { required: ['EIN', 'NAME', 'SUBSECTION', 'ORGANIZATION', 'NTEE_CD', 'SORT_NAME'] };
const CODE_VALUE_COLUMNS = { required: ['field', 'code', 'description'] };

/** The IRS's own name for the code table that ships beside the state files. */
export const IRS_CODE_VALUES_FILE = 'bmf_code_values.csv';
export const IRS_STATE_FILE = /^eo.*\.csv(\.gz)?$/i;

const LEGAL_STATUS: ReadonlyMap<string, string> = new Map([
  ['1', 'Corporation'],
  ['2', 'Trust'],
  ['3', 'Co-operative'],
  ['4', 'Partnership'],
  ['5', 'Association'],
]);

/** Reads the SUBSECTION table of `bmf_code_values.csv` ("IRC 501(c)(3)" → "501(c)(3)"). */
export async function readSubsectionTaxStatuses(file: string, context: ReadContext): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  for await (const { fields } of readRows(file, CODE_VALUE_COLUMNS, context)) {
    const description = fields.description!.trim();
    if (fields.field === 'SUBSECTION' && description.startsWith('IRC ')) {
      statuses.set(fields.code!.trim(), description.slice('IRC '.length));
    }
  }
  return statuses;
}

function nteeTag(fields: RowFields, vocabulary: Vocabulary): TagRecord | undefined {
  const raw = fields.optional('NTEE_CD', 'code');
  if (raw === undefined) return undefined;
  // Codes may carry a fourth character (a common code suffix); the NTEE-CC list has three.
  const code = raw.slice(0, 3).toUpperCase();
  if (vocabulary.hasTerm(NTEE_TAXONOMY.code, code)) return { taxonomy: NTEE_TAXONOMY.code, code };
  fields.warning('NTEE code not in the NTEE list', 'NTEE_CD', `"${raw}" is not an NTEE code; served without an NTEE tag`);
  return undefined;
}

/** SORT_NAME when it names the organization; otherwise undefined, counted as a note of its kind. */
function alternateNameOf(sortName: string | undefined, name: string, fields: RowFields, context: ReadContext): string | undefined {
  if (sortName === undefined) return undefined;
  const omission = sortNameOmission(sortName, name);
  if (omission === undefined) return sortName;
  context.diagnostics.note(omission.kind, fields.at('SORT_NAME'), `${omission.reason}; left out`);
  return undefined;
}

async function* readOrganizations(
  files: readonly string[],
  codeValues: string | undefined,
  context: ReadContext,
  vocabulary: Vocabulary,
): AsyncGenerator<OrganizationRecord> {
  const taxStatusBySubsection = codeValues === undefined ? new Map<string, string>() : await readSubsectionTaxStatuses(codeValues, context);
  for (const file of files) {
    for await (const row of readRows(file, COLUMNS, context)) {
      const fields = new RowFields(file, row, context.diagnostics);
      const ein = fields.required('EIN', 'id');
      const name = fields.required('NAME', 'name');
      const ntee = nteeTag(fields, vocabulary);
      const sortName = fields.optional('SORT_NAME', 'name');
      if (!fields.valid) continue;
      yield {
        externalId: ein,
        status: 'published',
        name,
        alternateName: alternateNameOf(sortName, name, fields, context),
        taxStatus: taxStatusBySubsection.get(row.fields.SUBSECTION!.trim()),
        taxId: ein,
        legalStatus: LEGAL_STATUS.get(row.fields.ORGANIZATION!.trim()),
        identifiers: [{ scheme: 'US-EIN', type: 'Employer Identification Number', identifier: ein }],
        tags: ntee === undefined ? [] : [ntee],
        at: fields.at(),
      };
    }
  }
}

/**
 * IRS state files (`eo_*.csv`, optionally gzipped), with the SUBSECTION table of
 * `bmf_code_values.csv` for tax statuses when it is among the files.
 */
export function irsSource(path: string, files: readonly string[]): Source {
  const codeValues = files.find((file) => file.toLowerCase().endsWith(IRS_CODE_VALUES_FILE));
  const stateFiles = files.filter((file) => file !== codeValues);
  return {
    kind: 'irs',
    path,
    files,
    organizations: (context, vocabulary) => readOrganizations(stateFiles, codeValues, context, vocabulary),
  };
}
