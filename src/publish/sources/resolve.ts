import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeFileError } from '../text-input.ts';
import { TABULAR_FILE } from '../rows.ts';
import { hsdsDatapackageSource } from './hsds-datapackage.ts';
import { IRS_CODE_VALUES_FILE, IRS_STATE_FILE, irsSource } from './irs-bmf.ts';
import { nativeRoleOf, nativeSource } from './native.ts';
import { nteeSource } from './ntee.ts';
import { nteeCrosswalkSource } from './ntee-crosswalk.ts';
import { openEligibilitySource } from './open-eligibility.ts';
import { SOURCE_KINDS } from './source.ts';
import type { Diagnostics } from '../diagnostics.ts';
import type { Source, SourceKind } from './source.ts';

/**
 * Turns command-line source arguments into sources. An argument is a file or a directory,
 * optionally prefixed with its kind (`native:dir`, `irs:eo_ca.csv`, `hsds:package/`); without a
 * prefix the kind is recognised from names (see docs/data-format.md):
 * - a directory with `datapackage.json` or `attributes.csv` is an HSDS datapackage;
 * - any other directory is searched (recursively) for the files below;
 * - `taxonomies`, `taxonomy_terms`, `organizations`, `organization_tags`, `organization_identifiers`
 *   (.csv or .ndjson, optionally .gz) are native files;
 * - `eo*.csv[.gz]` are IRS state files (`bmf_code_values.csv` beside them gives tax statuses);
 * - `ntee_codes.csv`, `open_eligibility*.csv`, and `ntee_open_eligibility*.csv` or `*crosswalk*.csv`
 *   are the code lists and the crosswalk.
 */

const KIND_PREFIX = new RegExp(`^(${SOURCE_KINDS.join('|')}):(.+)$`);

type FileKind = Exclude<SourceKind, 'hsds'>;

function fileKindOf(file: string): FileKind | undefined {
  const name = basename(file).toLowerCase();
  if (nativeRoleOf(file) !== undefined) return 'native';
  if (IRS_STATE_FILE.test(name) || name === IRS_CODE_VALUES_FILE) return 'irs';
  if (/^ntee_codes\.csv(\.gz)?$/.test(name)) return 'ntee';
  if (/^open_eligibility.*\.csv(\.gz)?$/.test(name)) return 'open-eligibility';
  if (/^(ntee_open_eligibility|.*crosswalk).*\.csv(\.gz)?$/.test(name)) return 'ntee-crosswalk';
  return undefined;
}

const isHsdsDatapackage = (directory: string): boolean =>
  existsSync(join(directory, 'datapackage.json')) || existsSync(join(directory, 'attributes.csv'));

function sourceOfFiles(kind: FileKind, path: string, files: string[]): Source[] {
  switch (kind) {
    case 'native':
      return [nativeSource(path, files)];
    case 'irs':
      return [irsSource(path, files)];
    case 'ntee':
      return files.map(nteeSource);
    case 'open-eligibility':
      return files.map(openEligibilitySource);
    case 'ntee-crosswalk':
      return files.map(nteeCrosswalkSource);
  }
}

/** The sources in a directory: an HSDS datapackage, or the recognised files in it and below it. */
function scanDirectory(directory: string): Source[] {
  if (isHsdsDatapackage(directory)) return [hsdsDatapackageSource(directory)];
  const sources: Source[] = [];
  const filesByKind = new Map<FileKind, string[]>();
  for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(directory, entry.name);
    if (entry.isDirectory() || (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isDirectory())) {
      sources.push(...scanDirectory(path));
      continue;
    }
    const kind = fileKindOf(path);
    if (kind !== undefined) filesByKind.set(kind, [...(filesByKind.get(kind) ?? []), path]);
  }
  for (const [kind, files] of filesByKind) sources.push(...sourceOfFiles(kind, directory, files));
  return sources;
}

function resolveOne(argument: string, diagnostics: Diagnostics): Source[] {
  const prefixed = KIND_PREFIX.exec(argument);
  const kind = prefixed?.[1] as SourceKind | undefined;
  const path = prefixed?.[2] ?? argument;
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    diagnostics.error({ file: path }, describeFileError(error));
    return [];
  }
  if (kind === 'hsds') {
    if (isDirectory) return [hsdsDatapackageSource(path)];
    diagnostics.error({ file: path }, 'an HSDS datapackage is a directory');
    return [];
  }
  if (isDirectory) {
    if (kind === undefined) {
      const sources = scanDirectory(path);
      if (sources.length === 0) diagnostics.error({ file: path }, 'no source files recognised in this directory (see docs/data-format.md)');
      return sources;
    }
    const files = readdirSync(path)
      .sort()
      .map((name) => join(path, name))
      .filter((file) => (kind === 'native' ? nativeRoleOf(file) !== undefined : TABULAR_FILE.test(file)));
    if (files.length === 0) diagnostics.error({ file: path }, `no ${kind} files in this directory`);
    return sourceOfFiles(kind, path, files);
  }
  const fileKind = kind ?? fileKindOf(path);
  if (fileKind === undefined) {
    diagnostics.error({ file: path }, `cannot tell what kind of source this is from its name; prefix it with its kind (${SOURCE_KINDS.join(', ')}), e.g. native:${path}`);
    return [];
  }
  if (fileKind === 'native' && nativeRoleOf(path) === undefined) {
    diagnostics.error({ file: path }, 'a native file is named for what it holds: taxonomies, taxonomy_terms, organizations, organization_tags or organization_identifiers (.csv or .ndjson)');
    return [];
  }
  return sourceOfFiles(fileKind, path, [path]);
}

/**
 * IRS files given separately are one source, so `bmf_code_values.csv` gives tax statuses to the
 * state files whichever argument each came from.
 */
function mergeIrsSources(sources: Source[]): Source[] {
  const irs = sources.filter((source) => source.kind === 'irs');
  if (irs.length < 2) return sources;
  const merged = irsSource(irs.map((source) => source.path).join(', '), irs.flatMap((source) => source.files));
  return sources.filter((source) => source.kind !== 'irs' || source === irs[0]).map((source) => (source === irs[0] ? merged : source));
}

export function resolveSources(argumentsGiven: readonly string[], diagnostics: Diagnostics): Source[] {
  return mergeIrsSources(argumentsGiven.flatMap((argument) => resolveOne(argument, diagnostics)));
}
