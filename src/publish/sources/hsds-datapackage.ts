import { closeSync, fstatSync, readFileSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { RowFields } from '../fields.ts';
import { readRows } from '../rows.ts';
import { organizationDetails } from './native.ts';
import { checkSourceFile, describeFileError, sourceRoot } from '../source-paths.ts';
import type { SourceRoot } from '../source-paths.ts';
import { InputError, openSourceFile } from '../text-input.ts';
import type { Columns } from '../csv.ts';
import type { Diagnostic, Diagnostics } from '../diagnostics.ts';
import type { ReadContext, Source } from './source.ts';
import { isUuid } from '../../hsds/ids.ts';
import type { IdentifierLink, OrganizationRecord, TagLink, TaxonomyRecord, TaxonomyTermRecord } from '../../hsds/records.ts';

/**
 * HSDS 3.0 tabular data (a folder of CSV files named after HSDS tables, optionally with a
 * `datapackage.json`). Only the tables this API serves are read; the other HSDS tables are ignored.
 * Each table's columns are those of its HSDS schema, so no HSDS column draws an "unknown column" warning.
 */
export const HSDS_COLUMNS = {
  taxonomies: { required: ['id', 'name'], optional: ['description', 'uri', 'version'] },
  taxonomy_terms: {
    required: ['id', 'name', 'taxonomy_id'],
    optional: ['code', 'description', 'parent_id', 'taxonomy', 'language', 'term_uri'],
  },
  organizations: {
    required: ['id', 'name'],
    optional: [
      'alternate_name',
      'description',
      'email',
      'website',
      'tax_status',
      'tax_id',
      'year_incorporated',
      'legal_status',
      'logo',
      'uri',
      'parent_organization_id',
    ],
  },
  attributes: {
    required: ['id', 'link_id', 'taxonomy_term_id', 'link_entity'],
    optional: ['link_type', 'value'],
  },
  organization_identifiers: {
    required: ['id', 'organization_id', 'identifier_type', 'identifier'],
    optional: ['identifier_scheme'],
  },
} as const satisfies Record<string, Columns>;

export type HsdsResource = keyof typeof HSDS_COLUMNS;

const RESOURCES = Object.keys(HSDS_COLUMNS) as HsdsResource[];

/** An HSDS id as matched and served: a UUID in lower case, anything else as given. */
const canonicalId = (value: string): string => (isUuid(value) ? value.toLowerCase() : value);

/** The id to serve: only a UUID is kept (the API looks things up by UUID); otherwise the build derives one. */
const servedId = (value: string): string | undefined => (isUuid(value) ? value.toLowerCase() : undefined);

interface Layout {
  /** The file of each resource. */
  files: Record<HsdsResource, string>;
  /** The resource files that are there (each checked to be a regular file inside the folder). */
  present: string[];
  /** Problems with datapackage.json or the files it names, reported on the first read; when any, nothing is read. */
  problems: Diagnostic[];
}

/** A datapackage.json describes the tables; their rows are in the files it names, so none needs to be larger. */
export const MAX_DESCRIPTOR_BYTES = 10 * 1024 * 1024;

/** The text of datapackage.json, or undefined when there is none (problems go to `problems`). */
function readDescriptor(file: string, root: SourceRoot, problems: Diagnostic[]): string | undefined {
  const checked = checkSourceFile(file, root);
  if (checked.problem !== undefined) {
    if (!checked.missing) problems.push({ file, message: checked.problem });
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

/** Puts in `files` the path datapackage.json gives each resource, if there is a datapackage.json. */
function describedFiles(directory: string, root: SourceRoot, files: Record<HsdsResource, string>, problems: Diagnostic[]): void {
  const file = join(directory, 'datapackage.json');
  const text = readDescriptor(file, root, problems);
  if (text === undefined) return;
  let descriptor: unknown;
  try {
    descriptor = JSON.parse(text);
  } catch (error) {
    problems.push({ file, message: `not valid JSON: ${(error as Error).message}` });
    return;
  }
  const resources = (descriptor as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) {
    problems.push({ file, field: 'resources', message: 'must be a list of resources' });
    return;
  }
  const seen = new Set<string>();
  resources.forEach((resource: unknown, index) => {
    const { name, path } = (resource ?? {}) as { name?: unknown; path?: unknown };
    if (typeof name !== 'string' || !RESOURCES.includes(name as HsdsResource)) return;
    const field = `resources[${index}].path`;
    if (seen.has(name)) {
      problems.push({ file, field: `resources[${index}].name`, message: `resource "${name}" is listed twice` });
      return;
    }
    seen.add(name);
    if (typeof path !== 'string' || path === '') {
      problems.push({ file, field, message: `resource "${name}": the path must be one file name (a string)` });
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
      problems.push({ file, field, message: `resource "${name}": remote data (${path}) is not supported; give a file in the folder` });
    } else if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) {
      problems.push({ file, field, message: `resource "${name}": the path "${path}" must be relative to the folder, without ".."` });
    } else {
      files[name as HsdsResource] = join(directory, path);
    }
  });
}

/** Where each resource is: as named in datapackage.json when there is one, else `<name>.csv`. */
function layoutOf(directory: string): Layout {
  const files = Object.fromEntries(RESOURCES.map((name) => [name, join(directory, `${name}.csv`)])) as Record<HsdsResource, string>;
  const problems: Diagnostic[] = [];
  const root = sourceRoot(directory);
  if ('problem' in root) return { files, present: [], problems: [{ file: directory, message: root.problem }] };
  describedFiles(directory, root, files, problems);
  if (problems.length > 0) return { files, present: [], problems };
  const present: string[] = [];
  for (const file of Object.values(files)) {
    const checked = checkSourceFile(file, root);
    if (checked.problem === undefined) present.push(file);
    // A missing resource is no problem here: organizations is reported by its reader, the others are optional.
    else if (!checked.missing) problems.push({ file, message: checked.problem });
  }
  return { files, present: problems.length > 0 ? [] : present, problems };
}

interface TermRef {
  taxonomy: string;
  code: string;
}

/** Taxonomies and terms, read once per import (per Diagnostics) because terms and tags both need them. */
interface HsdsVocabulary {
  taxonomies: TaxonomyRecord[];
  terms: TaxonomyTermRecord[];
  /** A kept term's HSDS id → its taxonomy code and term code. */
  termsById: Map<string, TermRef>;
}

/** A directory of HSDS 3.0 CSV files: taxonomies, terms, organizations, their attributes and identifiers. */
export function hsdsDatapackageSource(directory: string): Source {
  const layout = layoutOf(directory);
  const { present } = layout;
  const reported = new WeakSet<Diagnostics>();
  const vocabularies = new WeakMap<Diagnostics, Promise<HsdsVocabulary>>();

  /** Reports datapackage.json problems once; true when the resources can be read. */
  const readable = (context: ReadContext): boolean => {
    if (!reported.has(context.diagnostics)) {
      reported.add(context.diagnostics);
      for (const { message, ...at } of layout.problems) context.diagnostics.error(at, message);
    }
    return layout.problems.length === 0;
  };

  /** The rows of a resource; nothing when its file is absent (organizations: an error, from the reader). */
  async function* rowsOf(resource: HsdsResource, context: ReadContext): AsyncGenerator<RowFields> {
    if (!readable(context)) return;
    const file = layout.files[resource];
    if (resource !== 'organizations' && !present.includes(file)) return;
    for await (const row of readRows(file, HSDS_COLUMNS[resource], context)) yield new RowFields(file, row, context.diagnostics);
  }

  async function readTaxonomies(context: ReadContext): Promise<TaxonomyRecord[]> {
    const taxonomies: TaxonomyRecord[] = [];
    for await (const row of rowsOf('taxonomies', context)) {
      const id = canonicalId(row.required('id', 'id'));
      const record: TaxonomyRecord = {
        code: id,
        id: servedId(id),
        name: row.required('name', 'name'),
        description: row.optional('description', 'description') ?? '',
        uri: row.url('uri'),
        version: row.optional('version', 'text'),
        at: row.at(),
      };
      if (row.valid) taxonomies.push(record);
    }
    return taxonomies;
  }

  async function readTerms(context: ReadContext, taxonomies: TaxonomyRecord[]): Promise<HsdsVocabulary> {
    const taxonomyFile = basename(layout.files.taxonomies);
    const taxonomyCodes = new Set(taxonomies.map((taxonomy) => taxonomy.code));
    const read: { record: TaxonomyTermRecord; termId: string; parentId: string | undefined }[] = [];
    const firstLine = new Map<string, number>();
    for await (const row of rowsOf('taxonomy_terms', context)) {
      const termId = canonicalId(row.required('id', 'id'));
      const taxonomyId = row.optional('taxonomy_id', 'id');
      let taxonomy = '';
      if (taxonomyId === undefined) row.error('taxonomy_id', 'is required: this API serves terms only within a taxonomy');
      else if (!taxonomyCodes.has(canonicalId(taxonomyId))) row.error('taxonomy_id', `names taxonomy ${taxonomyId}, which is not in ${taxonomyFile}`);
      else taxonomy = canonicalId(taxonomyId);
      const parentId = row.optional('parent_id', 'id');
      const record: TaxonomyTermRecord = {
        taxonomy,
        // Codes must be unique within a taxonomy; a term without one is known by its id.
        code: row.optional('code', 'code') ?? termId,
        id: servedId(termId),
        name: row.required('name', 'name'),
        description: row.optional('description', 'description') ?? '',
        termUri: row.url('term_uri'),
        at: row.at(),
      };
      if (termId !== '') {
        const first = firstLine.get(termId);
        if (first !== undefined) row.error('id', `${termId} is already the id of the term on line ${first}`);
        else firstLine.set(termId, row.line);
      }
      if (row.valid) read.push({ record, termId, parentId: parentId === undefined ? undefined : canonicalId(parentId) });
    }

    const byId = new Map(read.map((term) => [term.termId, term.record]));
    const terms: TaxonomyTermRecord[] = [];
    const termsById = new Map<string, TermRef>();
    for (const { record, termId, parentId } of read) {
      if (parentId !== undefined) {
        const parent = byId.get(parentId);
        if (parent !== undefined && parent.taxonomy !== record.taxonomy) {
          context.diagnostics.error({ ...record.at!, field: 'parent_id' }, `names term ${parentId}, which is in another taxonomy (${parent.taxonomy})`);
          continue;
        }
        // A parent_id naming no term is kept as given, for the build to report.
        record.parentCode = parent?.code ?? parentId;
        record.parentField = 'parent_id';
      }
      terms.push(record);
      termsById.set(termId, { taxonomy: record.taxonomy, code: record.code });
    }
    return { taxonomies, terms, termsById };
  }

  const vocabulary = (context: ReadContext): Promise<HsdsVocabulary> => {
    let promise = vocabularies.get(context.diagnostics);
    if (promise === undefined) {
      promise = readTaxonomies(context).then((taxonomies) => readTerms(context, taxonomies));
      vocabularies.set(context.diagnostics, promise);
    }
    return promise;
  };

  async function* organizations(context: ReadContext): AsyncGenerator<OrganizationRecord> {
    for await (const row of rowsOf('organizations', context)) {
      const parent = row.optional('parent_organization_id', 'id');
      const record: OrganizationRecord = {
        externalId: canonicalId(row.required('id', 'id')),
        // HSDS has no publication status: every organization given is published.
        status: 'published',
        ...organizationDetails(row),
        parentExternalId: parent === undefined ? undefined : canonicalId(parent),
        parentField: 'parent_organization_id',
        identifiers: [],
        tags: [],
        at: row.at(),
      };
      if (row.valid) yield record;
    }
  }

  async function* tags(context: ReadContext): AsyncGenerator<TagLink> {
    if (!readable(context)) return;
    const { termsById } = await vocabulary(context);
    const termFile = basename(layout.files.taxonomy_terms);
    for await (const row of rowsOf('attributes', context)) {
      const entity = row.optional('link_entity', 'text');
      if (entity?.toLowerCase() !== 'organization') {
        row.warning(
          'attribute not linked to an organization',
          'link_entity',
          `is "${entity ?? ''}", not "organization": only attributes of organizations are imported; skipped`,
        );
        continue;
      }
      const id = canonicalId(row.required('id', 'id'));
      const organization = canonicalId(row.required('link_id', 'id'));
      const termId = row.required('taxonomy_term_id', 'id');
      const term = termId === '' ? undefined : termsById.get(canonicalId(termId));
      if (termId !== '' && term === undefined) row.error('taxonomy_term_id', `names term ${termId}, which is not in ${termFile}`);
      const link: TagLink = {
        organization,
        taxonomy: term?.taxonomy ?? '',
        code: term?.code ?? '',
        attributeId: servedId(id),
        at: row.at('taxonomy_term_id'),
      };
      if (row.valid) yield link;
    }
  }

  async function* identifiers(context: ReadContext): AsyncGenerator<IdentifierLink> {
    for await (const row of rowsOf('organization_identifiers', context)) {
      const id = canonicalId(row.required('id', 'id'));
      const link: IdentifierLink = {
        organization: canonicalId(row.required('organization_id', 'id')),
        scheme: row.optional('identifier_scheme', 'identifier'),
        type: row.required('identifier_type', 'text'),
        identifier: row.required('identifier', 'identifier'),
        id: servedId(id),
        at: row.at('organization_id'),
      };
      if (row.valid) yield link;
    }
  }

  return {
    kind: 'hsds',
    path: directory,
    files: present,
    taxonomies: async (context) => (readable(context) ? (await vocabulary(context)).taxonomies : []),
    terms: async (context) => (readable(context) ? (await vocabulary(context)).terms : []),
    organizations: (context) => organizations(context),
    tags: (context) => tags(context),
    identifiers: (context) => identifiers(context),
  };
}
