import { closeSync, fstatSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { checkSourceFile, describeFileError, sourceRoot } from '../source-paths.ts';
import type { SourceRoot } from '../source-paths.ts';
import { InputError, openSourceFile } from '../text-input.ts';
import type { Diagnostic } from '../diagnostics.ts';

/**
 * Where the tables of an HSDS tabular package are, in any HSDS version from 1.0 to 3.2: the files a
 * `datapackage.json` names, or else the default file names (in any letter case). Tables are told
 * apart by their resource names and, where versions share a name, by their header (1.x `taxonomy`
 * holds terms, 3.x `taxonomy` holds taxonomies).
 */

export type HsdsTable =
  | 'organizations'
  | 'taxonomies'
  /** 3.x, or 2.0 with `term` for `name`. */
  | 'taxonomy_terms'
  /** 1.x `taxonomy.csv`: terms with `vocabulary`. */
  | 'taxonomy_v1'
  | 'attributes'
  | 'organization_identifiers'
  | 'urls'
  | 'services'
  /** 1.x service tags. */
  | 'services_taxonomy'
  /** 2.0 service tags. */
  | 'service_attributes'
  /** 2.0 tags of other entities. */
  | 'other_attributes';

/** Resource names (HSDS uses the singular; some packages the file's base name) and default file names. */
const NAMES: Record<Exclude<HsdsTable, 'taxonomy_v1'> | 'taxonomy', { resources: string[]; files: string[] }> = {
  organizations: { resources: ['organization', 'organizations'], files: ['organizations.csv'] },
  taxonomies: { resources: ['taxonomies'], files: ['taxonomies.csv'] },
  // A `taxonomy` resource is 3.x taxonomies or 1.x terms, by its header.
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

const TABLE_OF_RESOURCE = new Map(Object.entries(NAMES).flatMap(([table, { resources }]) => resources.map((name) => [name, table])));

/** Files in a package folder that are about it, not data: never read, never reported. */
const ABOUT_FILE = /^(datapackage\.json|readme.*|licen[cs]e.*|provenance.*|changelog.*|.*\.md|\..*)$/i;

/** A datapackage.json describes the tables; their rows are in the files it names, so none needs to be larger. */
export const MAX_DESCRIPTOR_BYTES = 10 * 1024 * 1024;

export interface PackageLayout {
  /** The files of each table found, in reading order. */
  files: Map<HsdsTable, string[]>;
  /** Every file to be read. */
  present: string[];
  /** Data files in the folder that no table reads, by name. */
  unread: string[];
  /** Problems with datapackage.json or the files it names; when any, nothing is read. */
  problems: Diagnostic[];
}

/** The folder's entries by lower-case name, so that `Organizations.csv` is found as `organizations.csv`. */
function entriesByLowerCaseName(directory: string, problems: Diagnostic[]): Map<string, string> {
  const byName = new Map<string, string>();
  let names: string[] = [];
  try {
    names = readdirSync(directory);
  } catch (error) {
    problems.push({ file: directory, message: describeFileError(error) });
  }
  for (const name of names.sort()) {
    const first = byName.get(name.toLowerCase());
    if (first !== undefined) problems.push({ file: join(directory, name), message: `${first} is here too: names differ only in letter case, so it is not clear which to read; keep one` });
    else byName.set(name.toLowerCase(), name);
  }
  return byName;
}

/** True when a directory holds an HSDS package: a datapackage.json, or a file name only HSDS uses. */
export function isHsdsPackage(directory: string): boolean {
  let names: string[];
  try {
    names = readdirSync(directory).map((name) => name.toLowerCase());
  } catch {
    return false;
  }
  const hsdsOnly = ['datapackage.json', 'attributes.csv', 'taxonomy.csv', 'services_taxonomy.csv', 'service_attributes.csv', 'other_attributes.csv', 'services.csv'];
  return names.some((name) => hsdsOnly.includes(name));
}

/** The header of a CSV file (its first record), or undefined when it cannot be read here (its reader reports why). */
function headerOf(file: string): string[] | undefined {
  if (/\.gz$/i.test(file)) return undefined;
  let descriptor: number | undefined;
  try {
    descriptor = openSourceFile(file);
    const buffer = Buffer.alloc(64 * 1024);
    const length = readSync(descriptor, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, length).toString('utf8').replace(/^\uFEFF/, '');
    const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
    const [header] = parse(firstLine, { relax_quotes: true }) as string[][];
    return header?.map((name) => name.trim());
  } catch {
    return undefined;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** A `taxonomy` table of 1.x holds terms (with parents and a vocabulary); of 3.x, taxonomies. */
const taxonomyTableOf = (file: string): HsdsTable => (headerOf(file)?.some((name) => name === 'parent_id' || name === 'vocabulary') ? 'taxonomy_v1' : 'taxonomies');

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
    problems.push({ file, message: `is ${size.toLocaleString('en-US')} bytes; the limit for a datapackage.json is ${MAX_DESCRIPTOR_BYTES / 1024 / 1024} MiB (it describes the tables; their rows belong in the CSV files)` });
  } catch (error) {
    problems.push({ file, message: error instanceof InputError ? error.message : describeFileError(error) });
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
  return undefined;
}

/** Checks one resource path of datapackage.json; returns the file, or undefined after recording why not. */
function resourceFile(directory: string, path: unknown, name: string, at: Diagnostic, problems: Diagnostic[]): string | undefined {
  if (typeof path !== 'string' || path === '') {
    problems.push({ ...at, message: `resource "${name}": the path must be a file name (a string), or a list of them` });
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    problems.push({ ...at, message: `resource "${name}": remote data (${path}) is not read; download it into the folder and give its file name` });
  } else if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) {
    problems.push({ ...at, message: `resource "${name}": the path "${path}" must be relative to the folder, without ".."` });
  } else {
    return join(directory, path);
  }
  return undefined;
}

/** The files datapackage.json gives the tables this API reads, by table; undefined when there is no datapackage.json. */
function describedFiles(directory: string, descriptorFile: string, root: SourceRoot, problems: Diagnostic[]): Map<HsdsTable, string[]> | undefined {
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
  const files = new Map<HsdsTable, string[]>();
  const seen = new Set<string>();
  resources.forEach((resource: unknown, index) => {
    const { name, path } = (resource ?? {}) as { name?: unknown; path?: unknown };
    const table = typeof name === 'string' ? TABLE_OF_RESOURCE.get(name.toLowerCase()) : undefined;
    if (table === undefined) return;
    if (seen.has(table)) {
      problems.push({ file: descriptorFile, field: `resources[${index}].name`, message: `resource "${name as string}" is listed twice` });
      return;
    }
    seen.add(table);
    const at = { file: descriptorFile, field: `resources[${index}].path`, message: '' };
    const paths = Array.isArray(path) ? path : [path];
    const tableFiles = paths.map((each) => resourceFile(directory, each, name as string, at, problems)).filter((file) => file !== undefined);
    if (tableFiles.length === 0) return;
    const kind = table === 'taxonomy' ? taxonomyTableOf(tableFiles[0]!) : (table as HsdsTable);
    files.set(kind, tableFiles);
  });
  return files;
}

/** Where each table is: as named in datapackage.json when there is one, else by default file name. */
export function packageLayout(directory: string): PackageLayout {
  const problems: Diagnostic[] = [];
  const none = (): PackageLayout => ({ files: new Map(), present: [], unread: [], problems });
  const root = sourceRoot(directory);
  if ('problem' in root) {
    problems.push({ file: directory, message: root.problem });
    return none();
  }
  const entries = entriesByLowerCaseName(directory, problems);
  const descriptorName = entries.get('datapackage.json');
  const described = descriptorName === undefined ? undefined : describedFiles(directory, join(directory, descriptorName), root, problems);
  if (problems.length > 0) return none();

  const files = new Map<HsdsTable, string[]>(described);
  for (const [table, names] of Object.entries(NAMES)) {
    const name = names.files.map((file) => entries.get(file)).find((found) => found !== undefined);
    if (name === undefined) continue;
    const file = join(directory, name);
    const kind = table === 'taxonomy' ? taxonomyTableOf(file) : (table as HsdsTable);
    // datapackage.json decides; a default file name only fills in a table it does not name.
    if (!files.has(kind)) files.set(kind, [file]);
  }
  const present: string[] = [];
  for (const [table, tableFiles] of files) {
    const found = tableFiles.filter((file) => {
      const checked = checkSourceFile(file, root);
      // A missing table is no problem here: organizations is reported by its reader, the others are optional.
      if (checked.problem !== undefined && !checked.missing) problems.push({ file, message: checked.problem });
      return checked.problem === undefined;
    });
    if (found.length === 0 && table !== 'organizations') files.delete(table);
    present.push(...found);
  }
  if (problems.length > 0) return none();
  const read = new Set(present);
  const unread = [...entries.values()].filter((name) => !read.has(join(directory, name)) && !ABOUT_FILE.test(name) && isRegularFile(join(directory, name), root));
  return { files, present, unread, problems };
}

const isRegularFile = (file: string, root: SourceRoot): boolean => checkSourceFile(file, root).problem === undefined;
