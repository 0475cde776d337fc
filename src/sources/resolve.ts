import { readdirSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { checkSourceFile, checkSourcePath, describeFileError, isPlainlyNotData, notRegularFile, withoutCaseTwins } from './files/source-paths.ts';
import type { SourceRoot } from './files/source-paths.ts';
import { TABULAR_FILE } from './files/rows.ts';
import { hsdsDatapackageSource } from './hsds-datapackage.ts';
import { isHsdsPackage } from './hsds-package-layout.ts';
import { IRS_CODE_VALUES_FILE, IRS_STATE_FILE, irsSource } from './irs-bmf.ts';
import { NATIVE_COLUMNS, nativeRoleOf, nativeSource } from './native.ts';
import { nteeSource } from './ntee.ts';
import { nteeCrosswalkSource } from './ntee-crosswalk.ts';
import { openEligibilitySource } from './open-eligibility.ts';
import { SOURCE_KINDS } from './source.ts';
import { hsdsApiSource } from './hsds-api.ts';
import { DEFAULT_HARVEST } from '../config.ts';
import type { HarvestOptions } from '../config.ts';
import type { Diagnostic, Diagnostics } from './files/diagnostics.ts';
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
 * Names are matched ignoring case (`Organizations.CSV`).
 */

const KIND_PREFIX = new RegExp(`^(${SOURCE_KINDS.join('|')}):(.+)$`);

type FileKind = Exclude<SourceKind, 'hsds' | 'hsds-api'>;

function fileKindOf(file: string): FileKind | undefined {
  const name = basename(file).toLowerCase();
  if (nativeRoleOf(file) !== undefined) return 'native';
  if (IRS_STATE_FILE.test(name) || name === IRS_CODE_VALUES_FILE) return 'irs';
  if (/^ntee_codes\.csv(\.gz)?$/.test(name)) return 'ntee';
  if (/^open_eligibility.*\.csv(\.gz)?$/.test(name)) return 'open-eligibility';
  if (/^(ntee_open_eligibility|.*crosswalk).*\.csv(\.gz)?$/.test(name)) return 'ntee-crosswalk';
  return undefined;
}

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

const reportTo = (diagnostics: Diagnostics) => ({ message, ...at }: Diagnostic): void => diagnostics.error(at, message);

/** Edits (insert, delete, replace a character) that turn one name into the other. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** Why a file found in a source folder is not read, with the name meant when it looks like a slip. */
function whyNotRead(file: string, kind?: FileKind): string {
  const name = basename(file).toLowerCase();
  const extension = TABULAR_FILE.exec(name)?.[0];
  const stem = extension === undefined ? name.replace(/\.[^.]*$/, '') : name.slice(0, -extension.length);
  const roles = Object.keys(NATIVE_COLUMNS);
  if (/\.(tsv|tab)$/.test(name)) return 'not read: a tab-separated file is not read; save it as CSV, with commas as separators, named for what it holds (see docs/data-format.md)';
  if (extension === undefined && roles.includes(stem)) return 'not read: a native file is .csv or .ndjson (optionally .gz); save it as CSV';
  if (/\.(xlsx|xlsm|xls|ods|numbers)$/.test(name)) return 'not read: a spreadsheet workbook is not read; save each sheet as a CSV file named for what it holds (see docs/data-format.md)';
  if (kind !== undefined && kind !== 'native') return `not read: not a .csv or .ndjson file, which is what a folder given as ${kind}: is read for`;
  const near = extension === undefined ? undefined : roles.find((role) => editDistance(stem, role) <= 3);
  const meant = near === undefined ? '' : ` (did you mean ${near}${extension}?)`;
  return `not read: not the name of a source file${meant}; see docs/data-format.md for the names read`;
}

/** Warns that a regular file in a source folder is not read, unless it is plainly not data. */
function warnNotRead(file: string, diagnostics: Diagnostics, kind?: FileKind): void {
  if (!isPlainlyNotData(basename(file))) diagnostics.warning('file not read', { file }, whyNotRead(file, kind));
}

interface Scan {
  /** The folder given: nothing is read from outside it. */
  root: SourceRoot;
  diagnostics: Diagnostics;
  /** Real paths of the folders and files taken, so that a link inside the folder neither loops nor reads a file twice. */
  seen: Set<string>;
}

/** The sources in a directory: an HSDS datapackage, or the recognised files in it and below it. */
function scanDirectory(directory: string, real: string, scan: Scan): Source[] {
  scan.seen.add(real);
  if (isHsdsPackage(directory)) return [hsdsDatapackageSource(directory)];
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    scan.diagnostics.error({ file: directory }, describeFileError(error));
    return [];
  }
  const sources: Source[] = [];
  const taken: { kind: FileKind; path: string }[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(directory, entry.name);
    const kind = fileKindOf(path);
    // Other files are never opened (only named in a warning); a link may lead to a folder, so it is followed to see.
    if (kind === undefined && !entry.isDirectory() && !entry.isSymbolicLink()) {
      if (entry.isFile()) warnNotRead(path, scan.diagnostics);
      continue;
    }
    const checked = checkSourcePath(path, scan.root);
    if (checked.problem !== undefined) {
      // What would be read is refused; a link to nothing readable, not named as a source, is ignored like other files.
      if (kind !== undefined || checked.stats?.isDirectory()) scan.diagnostics.error({ file: path }, checked.problem);
      continue;
    }
    if (checked.stats.isDirectory()) {
      if (!scan.seen.has(checked.real)) sources.push(...scanDirectory(path, checked.real, scan));
      continue;
    }
    if (kind === undefined && checked.stats.isFile()) warnNotRead(path, scan.diagnostics);
    if (kind === undefined || scan.seen.has(checked.real)) continue;
    const problem = notRegularFile(checked.stats);
    if (problem !== undefined) {
      scan.diagnostics.error({ file: path }, problem);
      continue;
    }
    scan.seen.add(checked.real);
    taken.push({ kind, path });
  }
  const read = new Set(withoutCaseTwins(taken.map(({ path }) => path), reportTo(scan.diagnostics)));
  const filesByKind = new Map<FileKind, string[]>();
  for (const { kind, path } of taken) if (read.has(path)) filesByKind.set(kind, [...(filesByKind.get(kind) ?? []), path]);
  for (const [kind, files] of filesByKind) sources.push(...sourceOfFiles(kind, directory, files));
  return sources;
}

/** The files of one kind directly in a directory given with that kind (`native:dir`). */
function filesOfKind(kind: FileKind, directory: string, root: SourceRoot, diagnostics: Diagnostics): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    diagnostics.error({ file: directory }, describeFileError(error));
    return [];
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  const isOfKind = (file: string): boolean => (kind === 'native' ? nativeRoleOf(file) !== undefined : TABULAR_FILE.test(file));
  for (const entry of entries) {
    const file = join(directory, entry.name);
    if (isOfKind(file)) continue;
    if (entry.isFile() || (entry.isSymbolicLink() && checkSourceFile(file, root).problem === undefined)) warnNotRead(file, diagnostics, kind);
  }
  const files = entries
    .map((entry) => join(directory, entry.name))
    .filter(isOfKind)
    .filter((file) => {
      const checked = checkSourceFile(file, root);
      if (checked.problem !== undefined) diagnostics.error({ file }, checked.problem);
      return checked.problem === undefined;
    });
  return withoutCaseTwins(files, reportTo(diagnostics));
}

/** An HSDS API given by its base URL (`https://example.org/api/hsds/v3`, or `hsds-api:` and one). */
const API_URL = /^https?:\/\//i;

function resolveOne(argument: string, diagnostics: Diagnostics, harvest: HarvestOptions): Source[] {
  const prefixed = KIND_PREFIX.exec(argument);
  const kind = prefixed?.[1] as SourceKind | undefined;
  const path = prefixed?.[2] ?? argument;
  if (API_URL.test(path) || kind === 'hsds-api') {
    if (API_URL.test(path) && URL.canParse(path) && (kind === undefined || kind === 'hsds-api')) return [hsdsApiSource(path, harvest)];
    diagnostics.error({ file: path }, kind === 'hsds-api' ? 'an HSDS API is given by its base URL, http:// or https://' : `a URL is read as an HSDS API, not as ${kind}:`);
    return [];
  }
  // What is named on the command line may be a link anywhere; what is found inside it may not.
  const checked = checkSourcePath(path);
  if (checked.problem !== undefined) {
    diagnostics.error({ file: path }, checked.problem);
    return [];
  }
  const isDirectory = checked.stats.isDirectory();
  if (kind === 'hsds') {
    if (isDirectory) return [hsdsDatapackageSource(path)];
    diagnostics.error({ file: path }, 'an HSDS datapackage is a directory');
    return [];
  }
  if (isDirectory) {
    const root = { path, real: checked.real };
    const errorsBefore = diagnostics.errors.length;
    const noneFound = (): boolean => diagnostics.errors.length === errorsBefore;
    if (kind === undefined) {
      const sources = scanDirectory(path, checked.real, { root, diagnostics, seen: new Set() });
      if (sources.length === 0 && noneFound()) diagnostics.error({ file: path }, 'no source files recognised in this directory (see docs/data-format.md)');
      return sources;
    }
    const files = filesOfKind(kind, path, root, diagnostics);
    if (files.length === 0 && noneFound()) diagnostics.error({ file: path }, `no ${kind} files in this directory`);
    return sourceOfFiles(kind, path, files);
  }
  const problem = notRegularFile(checked.stats);
  if (problem !== undefined) {
    diagnostics.error({ file: path }, problem);
    return [];
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

export function resolveSources(argumentsGiven: readonly string[], diagnostics: Diagnostics, harvest: HarvestOptions = DEFAULT_HARVEST): Source[] {
  return mergeIrsSources(argumentsGiven.flatMap((argument) => resolveOne(argument, diagnostics, harvest)));
}
