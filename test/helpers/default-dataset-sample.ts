import { copyFileSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DatasetInput } from '../../src/hsds/records.ts';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';
import type { Diagnostics } from '../../src/sources/files/diagnostics.ts';
import { temporaryDirectory } from './app.ts';
import { inputFromSources } from './sources.ts';

/** One real IRS state file, small enough to keep a suite fast (about 6,000 organizations). */
export const WYOMING = join(DEFAULT_DATA_DIR, 'irs-eo-bmf/eo_wy.csv.gz');

export interface DatasetSample {
  input: DatasetInput;
  diagnostics: Diagnostics;
  /** Removes the temporary data directory. */
  remove: () => void;
}

/**
 * The shipped data with one real IRS state file (Wyoming) instead of all of them: the bundled
 * taxonomies (NTEE, Open Eligibility), the crosswalk, the IRS code values and Wyoming, plus any
 * `extraIrsFiles` (name → CSV text) written next to it.
 */
export async function defaultDatasetSample(extraIrsFiles: Record<string, string> = {}): Promise<DatasetSample> {
  const directory = temporaryDirectory();
  const data = directory.path;
  try {
    // Copies, not links: a source folder's files must be inside it (links out of it are refused).
    for (const folder of ['ntee', 'open-eligibility', 'crosswalk']) cpSync(join(DEFAULT_DATA_DIR, folder), join(data, folder), { recursive: true });
    mkdirSync(join(data, 'irs-eo-bmf'));
    copyFileSync(join(DEFAULT_DATA_DIR, 'irs-eo-bmf/bmf_code_values.csv'), join(data, 'irs-eo-bmf/bmf_code_values.csv'));
    copyFileSync(WYOMING, join(data, 'irs-eo-bmf/eo_wy.csv.gz'));
    for (const [name, text] of Object.entries(extraIrsFiles)) writeFileSync(join(data, 'irs-eo-bmf', name), text);
    const { input, diagnostics } = await inputFromSources([data]);
    return { input, diagnostics, remove: directory.remove };
  } catch (error) {
    directory.remove();
    throw error;
  }
}
