import { Diagnostics } from '../../src/sources/files/diagnostics.ts';
import type { DiagnosticsOptions } from '../../src/sources/files/diagnostics.ts';
import { combineSources } from '../../src/sources/combine.ts';
import { resolveSources } from '../../src/sources/resolve.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';

/** The dataset input for command-line style source arguments, and the diagnostics it reports to. */
export async function inputFromSources(
  sources: readonly string[],
  options: DiagnosticsOptions = {},
): Promise<{ input: DatasetInput; diagnostics: Diagnostics }> {
  const diagnostics = new Diagnostics(options);
  const input = await combineSources(resolveSources(sources, diagnostics), { diagnostics });
  return { input, diagnostics };
}
