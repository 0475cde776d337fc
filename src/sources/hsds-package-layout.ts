import { closeSync, fstatSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { formatCount } from '../text.ts';
import { checkSourceFile, describeFileError, isPlainlyNotData, sourceRoot, withoutCaseTwins } from './files/source-paths.ts';
import type { SourceRoot } from './files/source-paths.ts';
import { InputError, openSourceFile } from './files/text-input.ts';
import type { Diagnostic } from './files/diagnostics.ts';

/**
 * Where the tables of an HSDS tabular package are, in any HSDS version from 1.0 to 3.2: the files a
 * `datapackage.json` names, or else the default file names (in any letter case, optionally gzipped).
 * Where versions share a name, the header tells the tables apart: 1.x `taxonomy` holds terms and 3.x
 * `taxonomy` taxonomies; 2.0 `taxonomy_terms` has `term` where 3.x has `name`.
 */

export type HsdsTable =
  | 'organizations'
  | 'taxonomies'
  | 'taxonomy_terms'
  /** 1.1/2.0 `taxonomy_terms`: `term` for the name, `taxonomy` for the vocabulary. */
  | 'taxonomy_terms_v2'
  /** 1.x `taxonomy.csv`: terms, with `vocabulary`. */
  | 'taxonomy_v1'
  | 'attributes'
  | 'organization_identifiers'
  | 'urls'
  | 'services'
  /** 1.x service tags. */
  | 'services_taxonomy'
  /** 1.1/2.0 service tags. */
  | 'service_attributes'
  /** 1.1/2.0 tags of other entities. */
  | 'other_attributes';

/** A table as named, before its header says which version it is. */
type NamedTable = Exclude<HsdsTable, 'taxonomy_v1' | 'taxonomy_terms_v2'> | 'taxonomy';

/** Resource names (HSDS uses the singular; some packages the file's base name) and default file names. */
const NAMES: Record<NamedTable, { resources: string[]; files: string[] }> = {
  organizations: { resources: ['organization', 'organizations'], files: ['organizations.csv'] },
  taxonomies: { resources: ['taxonomies'], files: ['taxonomies.csv'] },
  taxonomy: { resources: ['taxonomy'], files: ['taxonomy.csv'] },
  taxonomy_terms: { resources: ['taxonomy_term', 'taxonomy_terms'], files: ['taxonomy_terms.csv'] },
  attributes: { resources: ['attribute', 'attributes'], files: ['attributes.csv'] },
  organization_identifiers: { resources: ['organization_identifier', 'organization_identifiers'], files: ['organization_identifiers.csv'] },
  urls: { resources: ['url', 'urls'], files: ['url.csv', 'urls.csv'] },
  services: { resources: ['service', 'services'], files: ['services.csv'] },
  services_taxonomy: { resources: ['service_taxonomy', 'services_taxonomy'], files: ['services_taxonomy.csv', 'service_taxonomy.csv'] },
  service_attributes: { resources: ['service_attribute', 'service_attributes'], files: ['service_attributes.csv'] },
  other_attributes: { resources: ['other_attribute', 'other_attributes'], files: ['other_attributes.csv'] },
};

const TABLE_OF_RESOURCE = new Map(Object.entries(NAMES).flatMap(([table, { resources }]) => resources.map((name) => [name, table as NamedTable])));

/** Default file names, plain or gzipped, in lower case. */
const defaultNames = (table: NamedTable): string[] => NAMES[table].files.flatMap((file) => [file, `${file}.gz`]);

/** Files only HSDS packages have, besides the tables read here: a folder holding one is read as a package. */
const HSDS_ONLY_FILES = [
  ...(['taxonomy', 'attributes', 'urls', 'services', 'services_taxonomy', 'service_attributes', 'other_attributes'] as const).flatMap(defaultNames),
  'locations.csv',
  'service_at_locations.csv',
  'services_at_location.csv',
  'phones.csv',
  'metadata.csv',
];

/** A datapackage.json describes the tables; their rows are in the files it names, so none needs to be larger. */
export const MAX_DESCRIPTOR_BYTES = 10 * 1024 * 1024;

export interface PackageLayout {
  /** The files of each table found, in reading order (organizations may be absent: its reader says so). */
  files: Map<HsdsTable, string[]>;
  /** Every file to be read. */
  present: string[];
  /** The HSDS version the tables are of, for the summary. */
  version: string;
  /** Files in the folder that no table reads, by name. */
  unread: string[];
  /** Tables datapackage.json lists at a path where no file is. */
  listedButMissing: Diagnostic[];
  /** Problems with datapackage.json or the files it names; when any, nothing is read. */
  problems: Diagnostic[];
  /** Files beside a table file whose names differ from it only in case: errors, but the table is read. */
  caseTwins: Diagnostic[];
}

/** The header of a CSV file, plain or gzipped (its first record), or undefined when it cannot be read here (its reader says why). */
function headerOf(file: string): string[] | undefined {
  let descriptor: number | undefined;
  try {
    descriptor = openSourceFile(file);
    const buffer = Buffer.alloc(64 * 1024);
    const length = readSync(descriptor, buffer, 0, buffer.length, 0);
    let bytes = buffer.subarray(0, length);
    if (/\.gz$/i.test(file)) bytes = gunzipSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH });
    const firstLine = bytes.toString('utf8').replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
    const [header] = parse(firstLine, { relax_quotes: true }) as string[][];
    return header?.map((name) => name.trim());
  } catch {
    return undefined;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/**
 * True when a directory holds an HSDS package rather than native files (whose organizations have a
 * `status`, and whose tags are in `organization_tags`): it has a datapackage.json; or a file only HSDS
 * has, and organizations without `status`; or no tags file, and organizations with `id` and `name`
 * but no `status` (a 3.x package of the tables whose names the native format shares).
 */
export function isHsdsPackage(directory: string): boolean {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return false;
  }
  const lower = new Set(names.map((name) => name.toLowerCase()));
  if (lower.has('datapackage.json')) return true;
  const organizations = names.find((name) => defaultNames('organizations').includes(name.toLowerCase()));
  // Only a header read as CSV tells: one that is not (`;`-separated, say) is for its reader to diagnose.
  const header = organizations === undefined ? undefined : headerOf(join(directory, organizations));
  if (header?.includes('status') === true) return false;
  if (HSDS_ONLY_FILES.some((name) => lower.has(name))) return true;
  const nativeTags = [...lower].some((name) => name.startsWith('organization_tags.'));
  return !nativeTags && header?.includes('id') === true && header.includes('name');
}

/** Which table a `taxonomy` or `taxonomy_terms` file is, by its header. */
function versionedTable(table: NamedTable, file: string, tables: ReadonlySet<NamedTable>): HsdsTable {
  if (table === 'taxonomy_terms') return headerOf(file)?.includes('term') && !headerOf(file)?.includes('name') ? 'taxonomy_terms_v2' : 'taxonomy_terms';
  if (table !== 'taxonomy') return table;
  const header = headerOf(file) ?? [];
  if (header.some((name) => ['parent_id', 'parent_name', 'vocabulary', 'taxonomy_facet'].includes(name))) return 'taxonomy_v1';
  if (header.some((name) => ['description', 'uri', 'version'].includes(name))) return 'taxonomies';
  // Only id and name: 3.x taxonomies when the package has terms of them, else 1.x terms.
  return tables.has('taxonomy_terms') ? 'taxonomies' : 'taxonomy_v1';
}

/** Which HSDS version the tables found are, for the summary (each table is read by its own columns whatever this says). */
function versionOf(tables: ReadonlySet<HsdsTable>, organizationsHeader: readonly string[] | undefined): string {
  if (tables.has('taxonomy_v1') || tables.has('services_taxonomy')) return '1.x';
  const websiteAsUrl = organizationsHeader?.includes('url') === true && !organizationsHeader.includes('website');
  if (tables.has('taxonomy_terms_v2') || tables.has('service_attributes') || tables.has('other_attributes') || websiteAsUrl) return '1.1/2.0';
  if (tables.has('urls')) return '3.1 or later';
  return '3.x';
}

/** The text of datapackage.json, or undefined when it cannot be read (problems go to `problems`). */
function readDescriptor(file: string, root: SourceRoot, problems: Diagnostic[]): string | undefined {
  const checked = checkSourceFile(file, root);
  if (checked.problem !== undefined) {
    problems.push({ file, message: checked.problem });
    return undefined;
  }
  let descriptor: number | undefined;
  try {
    descriptor = openSourceFile(file);
    const { size } = fstatSync(descriptor);
    if (size <= MAX_DESCRIPTOR_BYTES) return readFileSync(descriptor, 'utf8');
    problems.push({ file, message: `is ${formatCount(size)} bytes; the limit for a datapackage.json is ${MAX_DESCRIPTOR_BYTES / 1024 / 1024} MiB (it describes the tables; their rows belong in the CSV files)` });
  } catch (error) {
    problems.push({ file, message: error instanceof InputError ? error.message : describeFileError(error) });
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
  return undefined;
}

/** A relative path found ignoring the case of each part (`Data/Orgs.CSV` for `data/orgs.csv`); the path as given when nothing matches. */
function ignoringCase(directory: string, path: string): string {
  let found = directory;
  for (const part of path.split(/[\\/]/).filter((each) => each !== '' && each !== '.')) {
    let names: string[] = [];
    try {
      names = readdirSync(found);
    } catch {
      return join(directory, path);
    }
    const name = names.includes(part) ? part : names.sort().find((candidate) => candidate.toLowerCase() === part.toLowerCase());
    if (name === undefined) return join(directory, path);
    found = join(found, name);
  }
  return found;
}

/** Checks one resource path of datapackage.json; returns the file, or undefined after recording why not. */
function resourceFile(directory: string, path: unknown, name: string, at: Omit<Diagnostic, 'message'>, problems: Diagnostic[]): string | undefined {
  if (typeof path !== 'string' || path === '') {
    problems.push({ ...at, message: `resource "${name}": the path must be a file name (a string), or a list of them` });
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    problems.push({ ...at, message: `resource "${name}": remote data (${path}) is not read; download it into the folder and give its file name` });
  } else if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) {
    problems.push({ ...at, message: `resource "${name}": the path "${path}" must be relative to the folder, without ".."` });
  } else {
    return ignoringCase(directory, path);
  }
  return undefined;
}

/** The files datapackage.json gives the tables read here, by table; undefined when it cannot be read. */
function describedFiles(directory: string, descriptorFile: string, root: SourceRoot, problems: Diagnostic[]): Map<NamedTable, { files: string[]; field: string }> | undefined {
  const text = readDescriptor(descriptorFile, root, problems);
  if (text === undefined) return undefined;
  let descriptor: unknown;
  try {
    descriptor = JSON.parse(text);
  } catch (error) {
    problems.push({ file: descriptorFile, message: `not valid JSON: ${(error as Error).message}` });
    return undefined;
  }
  const resources = (descriptor as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) {
    problems.push({ file: descriptorFile, field: 'resources', message: 'must be a list of resources' });
    return undefined;
  }
  const described = new Map<NamedTable, { files: string[]; field: string }>();
  resources.forEach((resource: unknown, index) => {
    const { name, path } = (resource ?? {}) as { name?: unknown; path?: unknown };
    const table = typeof name === 'string' ? TABLE_OF_RESOURCE.get(name.toLowerCase()) : undefined;
    if (table === undefined) return;
    if (described.has(table)) {
      problems.push({ file: descriptorFile, field: `resources[${index}].name`, message: `resource "${name as string}" is listed twice` });
      return;
    }
    const field = `resources[${index}].path`;
    const files = (Array.isArray(path) ? path : [path]).map((each) => resourceFile(directory, each, name as string, { file: descriptorFile, field }, problems));
    described.set(table, { files: files.filter((file) => file !== undefined), field });
  });
  return described;
}

/** Where each table is: as named in datapackage.json when it lists it, else by default file name. */
export function packageLayout(directory: string): PackageLayout {
  const layout: PackageLayout = { files: new Map(), present: [], version: '3.x', unread: [], listedButMissing: [], problems: [], caseTwins: [] };
  const { problems } = layout;
  const root = sourceRoot(directory);
  if ('problem' in root) {
    problems.push({ file: directory, message: root.problem });
    return layout;
  }
  let names: string[] = [];
  try {
    names = readdirSync(directory).sort();
  } catch (error) {
    problems.push({ file: directory, message: describeFileError(error) });
    return layout;
  }
  const byLowerCase = new Map<string, string>();
  for (const name of names) if (!byLowerCase.has(name.toLowerCase())) byLowerCase.set(name.toLowerCase(), name);
  const descriptorName = byLowerCase.get('datapackage.json');
  const descriptorFile = descriptorName === undefined ? undefined : join(directory, descriptorName);
  const described = descriptorFile === undefined ? undefined : describedFiles(directory, descriptorFile, root, problems);
  if (problems.length > 0) return layout;

  // Every file is checked to stay inside the folder before anything is opened, its header included;
  // once, though a table listed under its default name is looked for again by that name.
  const judged = new Map<string, boolean>();
  const usable = (file: string): boolean => {
    if (judged.has(file)) return judged.get(file)!;
    const checked = checkSourceFile(file, root);
    if (checked.problem !== undefined && !checked.missing) problems.push({ file, message: checked.problem });
    judged.set(file, checked.problem === undefined);
    return checked.problem === undefined;
  };
  const named = new Map<NamedTable, string[]>();
  for (const table of Object.keys(NAMES) as NamedTable[]) {
    const listed = described?.get(table);
    const listedFiles = listed?.files.filter(usable) ?? [];
    if (listed !== undefined && listedFiles.length < listed.files.length) {
      const missing = listed.files.filter((file) => {
        const checked = checkSourceFile(file, root);
        return checked.problem !== undefined && checked.missing;
      });
      for (const file of missing) layout.listedButMissing.push({ file: descriptorFile!, field: listed.field, message: `lists ${basename(file)}, which is not in the folder` });
    }
    if (listedFiles.length > 0) {
      named.set(table, listedFiles);
      continue;
    }
    // Not listed, or listed where no file is: the default file name, if there is one.
    const name = defaultNames(table).map((each) => byLowerCase.get(each)).find((each) => each !== undefined);
    if (name !== undefined && usable(join(directory, name))) named.set(table, [join(directory, name)]);
  }
  if (problems.length > 0) return layout;

  const tables = new Set(named.keys());
  for (const [table, files] of named) layout.files.set(versionedTable(table, files[0]!, tables), files);
  layout.present = [...layout.files.values()].flat();
  const organizations = layout.files.get('organizations')?.[0];
  layout.version = versionOf(new Set(layout.files.keys()), organizations === undefined ? undefined : headerOf(organizations));
  // A twin of a file that is read is an error (the first in byte order is read); twins of other files are only not read.
  const read = new Set(layout.present);
  const tableFolders = new Set(layout.present.map((file) => dirname(file)));
  for (const folder of tableFolders) {
    const inFolder = folder === directory ? names : safeReaddir(folder);
    const twinsOfRead = inFolder.filter((name) => [...read].some((file) => dirname(file) === folder && basename(file).toLowerCase() === name.toLowerCase()));
    withoutCaseTwins(twinsOfRead.map((name) => join(folder, name)), (problem) => layout.caseTwins.push(problem));
  }
  layout.unread = names.filter((name) => !read.has(join(directory, name)) && !isPlainlyNotData(name) && checkSourceFile(join(directory, name), root).problem === undefined);
  return layout;
}

function safeReaddir(folder: string): string[] {
  try {
    return readdirSync(folder).sort();
  } catch {
    return [];
  }
}
