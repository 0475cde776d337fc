import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSnapshot, InvalidDataset } from '../build/build.ts';
import type { BuildOptions, BuildResult, BuildStage } from '../build/build.ts';
import { Diagnostics, escapeControlCharacters, formatDiagnostic, TooManyErrors } from '../sources/files/diagnostics.ts';
import { counted, formatCount } from '../text.ts';
import { ImportBusy } from '../publish/import-lock.ts';
import { publishDataset } from '../publish/publish.ts';
import { StorageFault } from '../publish/storage-faults.ts';
import { publishToPostgres } from '../publish/publish-postgres.ts';
import type { PublishResult } from '../publish/publish.ts';
import { combineSources } from '../sources/combine.ts';
import { resolveSources } from '../sources/resolve.ts';
import { progressStage } from './progress.ts';
import type { ProgressStage } from './progress.ts';
import type { ImportConfig } from '../config.ts';
import type { Source } from '../sources/source.ts';

type Write = (line: string) => void;

const STAGE_LABELS: Record<Exclude<BuildStage, 'read'>, string> = { write: 'rendering and writing', load: 'loading into PostgreSQL' };


function totalBytes(files: readonly string[]): number {
  let total = 0;
  for (const file of files) {
    try {
      total += statSync(file).size;
    } catch {
      // A missing file is reported by its reader.
    }
  }
  return total;
}

function reportDiagnostics(diagnostics: Diagnostics, write: Write): void {
  for (const error of diagnostics.errors) write(`error: ${formatDiagnostic(error)}`);
  if (diagnostics.uncheckedReferences > 0) {
    write(`note: ${counted(diagnostics.uncheckedReferences, 'more reference')} to records not in the input, counted but not listed because errors came before them (a file or column that failed leaves references into it dangling); fix the errors above, then check again`);
  }
  for (const [label, summaries] of [['warning', diagnostics.warnings], ['note', diagnostics.notes]] as const) {
    for (const summary of summaries) {
      write(`${label}: ${formatCount(summary.count)} × ${summary.kind}, e.g.`);
      for (const example of summary.examples) write(`  ${formatDiagnostic(example)}`);
    }
  }
}

function describeCounts(result: BuildResult): string {
  return (
    `${counted(result.organizations, 'organization')} (${formatCount(result.unpublishedOrganizations)} unpublished left out), ` +
    `${counted(result.taxonomies, 'taxonomy', 'taxonomies')}, ${counted(result.taxonomyTerms, 'taxonomy term')}`
  );
}

/**
 * `import` and `validate`: read every source, check everything, then (import only) publish
 * atomically. Returns the exit code: 0 publishable (and published), 1 not. The verdict, the last
 * line, goes to `writeResult`; progress and diagnostics go to `writeLine`.
 */
export async function runImport(command: 'import' | 'validate', config: ImportConfig, writeLine: Write, writeResult: Write): Promise<number> {
  return (await importSources(command, config, undefined, writeLine, writeResult)).code;
}

/**
 * runImport, from `prepared` sources when given (sync makes its own) rather than config.sources;
 * with the version published or found live, on success.
 */
export async function importSources(
  command: 'import' | 'validate',
  config: ImportConfig,
  prepared: Source[] | undefined,
  writeLine: Write,
  writeResult: Write,
): Promise<{ code: number; version?: string }> {
  // Messages quote input (ids, values, file names): every line printed goes through here, escaped.
  const write: Write = (line) => writeLine(escapeControlCharacters(line));
  const verdict: Write = (line) => writeResult(escapeControlCharacters(line));
  const started = performance.now();
  const diagnostics = new Diagnostics({ maxErrors: config.maxErrors, strict: config.strict });
  let result: BuildResult | PublishResult | undefined;
  let stage: ProgressStage | undefined;
  let sources: Source[] = [];
  try {
    sources = prepared ?? resolveSources(config.sources, diagnostics, config.harvest);
    const bytes = totalBytes(sources.flatMap((source) => source.files));
    let bytesRead = 0;
    let rowsRead = 0;
    stage = progressStage(config.progress, 'reading sources', bytes, write);
    const input = await combineSources(sources, {
      diagnostics,
      onBytes: (read) => {
        bytesRead += read;
        stage?.update(bytesRead, rowsRead);
      },
      onItems: (items) => stage?.update(bytesRead, items),
    });
    let current: BuildStage = 'read';
    const options: BuildOptions = {
      diagnostics,
      onProgress: (step, rows, total) => {
        if (step === 'read') {
          rowsRead = rows;
          stage?.update(bytesRead, rows);
          return;
        }
        if (step !== current) {
          current = step;
          stage?.finish();
          stage = progressStage(config.progress, STAGE_LABELS[step], total ?? 0, write);
        }
        stage?.update(rows, rows);
      },
    };
    result =
      command === 'import'
        ? config.database === undefined
          ? await publishDataset(input, config.dataDir, options)
          : await publishToPostgres(input, config.database, options)
        : await buildSnapshot(input, join(tmpdir(), `hsds-org-api-validate-${process.pid}.sqlite`), { ...options, dryRun: true });
    stage?.finish();
  } catch (error) {
    stage?.finish();
    if (error instanceof StorageFault || error instanceof ImportBusy) {
      reportDiagnostics(diagnostics, write);
      write(`Error: ${error.message}. Nothing was published; the live dataset is unchanged.`);
      return { code: 1 };
    }
    if (!(error instanceof InvalidDataset || error instanceof TooManyErrors)) throw error;
  } finally {
    for (const source of sources) source.close?.();
  }
  reportDiagnostics(diagnostics, write);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const peak = Math.round(process.resourceUsage().maxRSS / 1024);
  const warnings = counted(diagnostics.warningCount, 'warning');
  if (result === undefined || diagnostics.hasErrors) {
    const stopped = diagnostics.errors.length >= diagnostics.maxErrors ? ` (stopped at the limit of ${diagnostics.maxErrors}; there may be more)` : '';
    const where = command === 'import' ? ' Nothing was published; the live dataset is unchanged.' : '';
    verdict(`Not publishable: ${counted(diagnostics.errors.length, 'error')}${stopped}, ${warnings}.${where}`);
    return { code: 1 };
  }
  if (command === 'validate') {
    verdict(`Publishable: ${describeCounts(result)}; ${warnings}. Checked in ${seconds} s, peak RSS ${peak} MiB.`);
  } else if ('changed' in result && !result.changed) {
    verdict(`Unchanged: dataset ${result.version} (published ${result.publishedAt}) is already live; ${warnings}. Took ${seconds} s.`);
  } else {
    const changes = result.fromPrevious;
    const since =
      changes === undefined
        ? ''
        : `; since ${changes.since}, ${counted(changes.changed, 'organization')} added or changed and ${formatCount(changes.removed)} removed${
            changes.versionsDropped === 0 ? '' : ` (the changes feed no longer goes back to the ${counted(changes.versionsDropped, 'version')} before: their clients would read more removals than there are organizations, and copy the dataset afresh)`
          }`;
    if (result.timings !== undefined && config.progress !== 'none') {
      const { read, write: render, index } = result.timings;
      const rest = Number(seconds) - read - render - index;
      write(`time by stage: reading and checking ${read.toFixed(1)} s, rendering and writing ${render.toFixed(1)} s, indexing ${index.toFixed(1)} s, the rest (taxonomies and terms, history, checksum, the switch) ${Math.max(0, rest).toFixed(1)} s`);
    }
    verdict(`Published dataset ${result.version}: ${describeCounts(result)}${since}; ${warnings}. Took ${seconds} s, peak RSS ${peak} MiB.`);
  }
  return { code: 0, version: result.version };
}
