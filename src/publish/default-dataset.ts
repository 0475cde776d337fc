import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readIrsOrganizations, readSubsectionTaxStatuses } from './sources/irs-bmf.ts';
import type { IrsReadReport } from './sources/irs-bmf.ts';
import { NTEE_TAXONOMY, readNteeTerms } from './sources/ntee.ts';
import { readNteeCrosswalk } from './sources/ntee-crosswalk.ts';
import { OE_SERVICES_TAXONOMY, OE_SITUATIONS_TAXONOMY, readOpenEligibilityTerms } from './sources/open-eligibility.ts';
import type { DatasetInput } from '../hsds/records.ts';

/** The dataset shipped in `data/` (see data/README.md for sources and licences). */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../../data/', import.meta.url));

export interface DefaultDataset {
  input: DatasetInput;
  /** Filled in while `input.organizations` is consumed. */
  report: IrsReadReport;
}

export async function loadDefaultDataset(dataDir: string = DEFAULT_DATA_DIR): Promise<DefaultDataset> {
  const nteeTerms = await readNteeTerms(join(dataDir, 'ntee/ntee_codes.csv'));
  const oeTerms = await readOpenEligibilityTerms(join(dataDir, 'open-eligibility/open_eligibility_v2_terms.csv'));
  const crosswalk = await readNteeCrosswalk(join(dataDir, 'crosswalk/ntee_open_eligibility.csv'), nteeTerms);
  const taxStatusBySubsection = await readSubsectionTaxStatuses(join(dataDir, 'irs-eo-bmf/bmf_code_values.csv'));
  const irsDir = join(dataDir, 'irs-eo-bmf');
  const irsFiles = readdirSync(irsDir)
    .filter((name) => /^eo.*\.csv(\.gz)?$/.test(name))
    .sort()
    .map((name) => join(irsDir, name));
  const report: IrsReadReport = { organizations: 0, unknownNteeCodes: new Map() };
  const nteeCodes = new Set(nteeTerms.map((term) => term.code));
  return {
    input: {
      taxonomies: [NTEE_TAXONOMY, OE_SERVICES_TAXONOMY, OE_SITUATIONS_TAXONOMY],
      terms: [...nteeTerms, ...oeTerms],
      organizations: readIrsOrganizations(irsFiles, { nteeCodes, crosswalk, taxStatusBySubsection }, report),
    },
    report,
  };
}
