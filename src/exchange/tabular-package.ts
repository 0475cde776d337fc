import { once } from 'node:events';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WriteStream } from 'node:fs';
import { HSDS_VERSION } from '../hsds/profile.ts';
import { plainCsvField } from '../http/csv.ts';
import type { Batches, Store } from '../store/store.ts';

/**
 * What this API serves, as an HSDS tabular data package: a CSV file per HSDS table and a
 * `datapackage.json` describing them (Frictionless Data Package and Table Schema), the tables, file
 * names, columns and column order of HSDS's own descriptor (vendor/hsds-3.0/datapackage.json), with
 * what HSDS 3.1 to 3.2.3 added to the tables served here (the `url` table, `attribute.label`), and
 * this profile's extension fields as columns of their own at the end of their tables. `import` reads
 * such a folder as any HSDS package, extension columns included, so that a copy of an instance
 * serves the same documents.
 *
 * The CSV is data for programs: values are written as served, nothing neutralised for spreadsheets
 * (that is what the CSV of `/organizations.csv` is for).
 */

type Json = Record<string, unknown>;

interface Field {
  name: string;
  type: string;
  format?: string;
  title?: string;
  description?: string;
  constraints?: { required?: boolean; unique?: boolean };
  /** Table Schema 2.0: values of this field that mean "no value" (the schema's when absent). */
  missingValues?: string[];
}

interface TableSchema {
  primaryKey: string;
  fields: Field[];
  foreignKeys?: Array<{ fields: string; reference: { resource: string; fields: string } }>;
}

interface Resource {
  name: string;
  path: string;
  description?: string;
  format: 'csv';
  mediatype: 'text/csv';
  encoding: 'utf-8';
  profile: 'tabular-data-resource';
  schema: TableSchema;
}

const OFFICIAL = JSON.parse(readFileSync(new URL('../../vendor/hsds-3.0/datapackage.json', import.meta.url), 'utf8')) as { resources: Array<Resource & { schema: TableSchema }> };

/** A field of HSDS's descriptor as it is, but for what Table Schema does not define (HSDS's `core`, `example`). */
function officialResource(name: string): Resource {
  const resource = OFFICIAL.resources.find((candidate) => candidate.name === name);
  if (resource === undefined) throw new Error(`vendor/hsds-3.0/datapackage.json has no resource ${name}`);
  const fields = resource.schema.fields.map(({ name: fieldName, type, format, title, description, constraints }) => ({ name: fieldName, type, ...(format === undefined ? {} : { format }), title, description, constraints }));
  return {
    name,
    path: resource.path,
    description: resource.description,
    format: 'csv',
    mediatype: 'text/csv',
    encoding: 'utf-8',
    profile: 'tabular-data-resource',
    schema: { primaryKey: resource.schema.primaryKey, fields, ...(resource.schema.foreignKeys === undefined ? {} : { foreignKeys: resource.schema.foreignKeys }) },
  };
}

const optional = (required = false, unique = false) => ({ required, unique });

/** This profile's extension fields (docs/profile.md), each a column after HSDS's own. */
const EXTENSIONS: Record<string, Field[]> = {
  organization: [
    { name: 'external_identifier', type: 'string', title: 'External identifier', description: 'The organization\'s id in the data it was published from (this profile\'s extension field).', constraints: optional(true, true) },
    { name: 'last_modified', type: 'datetime', title: 'Last modified', description: 'When this organization was last changed (this profile\'s extension field).', constraints: optional(true) },
    { name: 'provenance_source', type: 'string', title: 'Source', description: 'The source of record the organization came from: `provenance.source` (this profile\'s extension field).', constraints: optional(true) },
    { name: 'provenance_location', type: 'string', title: 'Location in the source', description: 'The file or API of that source: `provenance.location`.', constraints: optional(true) },
    { name: 'provenance_source_id', type: 'string', title: 'Id in the source', description: 'The organization\'s id in that source: `provenance.source_id`.', constraints: optional(true) },
    { name: 'provenance_read_at', type: 'datetime', title: 'Read at', description: 'When it was first read from that source as it is: `provenance.read_at`.', constraints: optional(true) },
  ],
  taxonomy: [{ name: 'code', type: 'string', title: 'Code', description: 'The taxonomy\'s short code, as used in `classifications` and filters (this profile\'s extension field).', constraints: optional(true, true) }],
};

/** The url table of HSDS 3.1 to 3.2.3, as their `url.json` describes it. */
const URL_RESOURCE: Resource = {
  name: 'url',
  path: 'urls.csv',
  description: 'The URLs of an organization or service besides its main website (HSDS 3.1 and later).',
  format: 'csv',
  mediatype: 'text/csv',
  encoding: 'utf-8',
  profile: 'tabular-data-resource',
  schema: {
    primaryKey: 'id',
    fields: [
      { name: 'id', type: 'string', format: 'uuid', title: 'Identifier', description: 'The identifier for the URL object. Each URL must have a unique identifier.', constraints: optional(true, true) },
      { name: 'label', type: 'string', title: 'Label', description: 'The human-readable label for this URL e.g. “Twitter” or “Website”.', constraints: optional() },
      { name: 'url', type: 'string', format: 'uri', title: 'URL', description: 'The URL for this URL object.', constraints: optional(true) },
      { name: 'organization_id', type: 'string', format: 'uuid', title: 'Organization Identifier', description: 'The identifier of the organization for this URL.', constraints: optional() },
      { name: 'service_id', type: 'string', format: 'uuid', title: 'Service Identifier', description: 'The identifier of the service for this URL.', constraints: optional() },
    ],
    foreignKeys: [{ fields: 'organization_id', reference: { resource: 'organization', fields: 'id' } }],
  },
};

const ATTRIBUTE_LABEL: Field = { name: 'label', type: 'string', title: 'Label', description: 'A free text label of the attribute (HSDS 3.1 and later).', constraints: optional() };

/** The tables of the package, in the order written: referenced tables before those referring to them. */
export const TABLES = ['taxonomy', 'taxonomy_term', 'organization', 'organization_identifier', 'url', 'attribute'] as const;
export type Table = (typeof TABLES)[number];

function resources(): Record<Table, Resource> {
  const attribute = officialResource('attribute');
  attribute.schema.fields.push(ATTRIBUTE_LABEL);
  const made: Record<Table, Resource> = {
    taxonomy: officialResource('taxonomy'),
    taxonomy_term: officialResource('taxonomy_term'),
    organization: officialResource('organization'),
    organization_identifier: officialResource('organization_identifier'),
    url: URL_RESOURCE,
    attribute,
  };
  for (const [table, fields] of Object.entries(EXTENSIONS)) made[table as Table].schema.fields.push(...fields);
  // HSDS 3 requires `description` and allows it empty (its JSON schemas); in CSV an empty field is
  // no value at all (Table Schema's default missingValues): here the empty string is the value.
  for (const resource of Object.values(made)) {
    const description = resource.schema.fields.find((field) => field.name === 'description' && field.constraints?.required === true);
    if (description !== undefined) description.missingValues = [];
  }
  return made;
}

/** The columns of each table, in order. */
export const COLUMNS: Record<Table, string[]> = Object.fromEntries(Object.entries(resources()).map(([table, resource]) => [table, resource.schema.fields.map((field) => field.name)])) as Record<Table, string[]>;

export const FILE_NAMES: Record<Table, string> = Object.fromEntries(Object.entries(resources()).map(([table, resource]) => [table, resource.path])) as Record<Table, string>;

/**
 * What the rows written showed, for the descriptor: a reference HSDS declares a foreign key for that
 * names a record not in the package (the data served may, see docs/data-format.md), and a column
 * HSDS declares unique that is not.
 */
export interface TableFacts {
  /** Per table, references by field to records not in the package. */
  danglingReferences: Map<string, number>;
  /** `table.field` of unique columns holding a value twice. */
  repeated: Set<string>;
}

/** The file the descriptor is written to, beside the tables. */
export const DESCRIPTOR_FILE = 'datapackage.json';

/** Every file of a package, in the order written into its archive: the descriptor, then the tables. */
export const PACKAGE_FILES = [DESCRIPTOR_FILE, ...TABLES.map((table) => FILE_NAMES[table])];

/** The datapackage.json of a package of `dataset`, given what its rows showed. */
export function packageDescriptor(dataset: { version: string; publishedAt: string }, facts: TableFacts): Json {
  const made = resources();
  for (const resource of Object.values(made)) {
    const schema = resource.schema;
    schema.foreignKeys = schema.foreignKeys?.filter((key) => {
      const dangling = facts.danglingReferences.get(`${resource.name}.${key.fields}`) ?? 0;
      if (dangling > 0) resource.description = `${resource.description ?? ''} In this package, ${dangling} values of ${key.fields} name a ${key.reference.resource} that is not in it (as the data was published), so no foreign key is declared for it.`.trim();
      return dangling === 0;
    });
    if (schema.foreignKeys?.length === 0) delete schema.foreignKeys;
    for (const field of schema.fields) {
      if (field.constraints?.unique === true && facts.repeated.has(`${resource.name}.${field.name}`)) {
        field.constraints.unique = false;
        field.description = `${field.description ?? ''} Not unique in this package (as the data was published).`.trim();
      }
    }
  }
  return {
    $schema: 'https://datapackage.org/profiles/2.0/datapackage.json',
    name: 'hsds-org-api',
    title: 'Organizations and taxonomies (HSDS)',
    description: `Organizations and taxonomies of dataset version ${dataset.version}, published ${dataset.publishedAt}, as an HSDS ${HSDS_VERSION} tabular package reduced to the tables the hsds-org-api profile serves.`,
    profile: 'tabular-data-package',
    version: dataset.version,
    created: dataset.publishedAt,
    homepage: 'https://docs.openreferral.org',
    // The profile the tables follow, by the path an instance serves it at (the package is the same from every origin).
    hsds: { version: HSDS_VERSION, profile: 'hsds-org-api: organizations and taxonomies', profile_path: '/api/hsds/v3/profile' },
    resources: TABLES.map((table) => made[table]),
  };
}

/** A table's file being written: the header, then rows, through a stream that is waited for when full. */
class TableFile {
  private readonly stream: WriteStream;
  private readonly columns: readonly string[];
  private chunk = '';
  rows = 0;

  constructor(directory: string, table: Table) {
    this.columns = COLUMNS[table];
    this.stream = createWriteStream(join(directory, FILE_NAMES[table]));
    this.chunk = `${this.columns.join(',')}\r\n`;
  }

  async write(row: Json): Promise<void> {
    this.chunk += `${this.columns.map((column) => plainCsvField(row[column])).join(',')}\r\n`;
    this.rows++;
    if (this.chunk.length >= 256 * 1024) await this.flush();
  }

  private async flush(): Promise<void> {
    const chunk = this.chunk;
    this.chunk = '';
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }
}

/** The items of a list read in batches, parsed; `pause`, when given, awaited after each batch. */
export async function* parsedItems(batches: Batches, pause?: () => Promise<void>): AsyncGenerator<Json> {
  for await (const batch of batches) {
    for (const json of batch) yield JSON.parse(json) as Json;
    await pause?.();
  }
}

export interface WrittenPackage {
  version: string;
  publishedAt: string;
  rows: Record<Table, number>;
}

/**
 * Writes the package of the dataset `store` serves into `directory` (which must exist and be
 * empty): one pass over each list, in list order. The same dataset always gives the same bytes.
 * `pause`, when given, is awaited after each batch read (a server shares its turns so).
 */
export async function writeTabularPackage(store: Store, directory: string, onProgress?: (organizations: number) => void, pause?: () => Promise<void>): Promise<WrittenPackage> {
  const info = await store.info();
  const files = Object.fromEntries(TABLES.map((table) => [table, new TableFile(directory, table)])) as Record<Table, TableFile>;
  const facts: TableFacts = { danglingReferences: new Map(), repeated: new Set() };
  const dangling = (key: string) => facts.danglingReferences.set(key, (facts.danglingReferences.get(key) ?? 0) + 1);
  const seenCodes = new Set<unknown>();
  try {
    const taxonomyIds = new Set<string>();
    for await (const taxonomy of parsedItems(store.allTaxonomies({}))) {
      taxonomyIds.add(taxonomy.id as string);
      await files.taxonomy.write(taxonomy);
    }
    for await (const term of parsedItems(store.allTaxonomyTerms({}))) {
      if (term.taxonomy_id !== undefined && !taxonomyIds.has(term.taxonomy_id as string)) dangling('taxonomy_term.taxonomy_id');
      if (term.code !== undefined) {
        if (seenCodes.has(term.code)) facts.repeated.add('taxonomy_term.code');
        seenCodes.add(term.code);
      }
      await files.taxonomy_term.write(term);
    }
    seenCodes.clear();
    let organizations = 0;
    for await (const organization of parsedItems(store.allOrganizations({}, { full: true }), pause)) {
      const provenance = (organization.provenance ?? {}) as Json;
      await files.organization.write({ ...organization, provenance_source: provenance.source, provenance_location: provenance.location, provenance_source_id: provenance.source_id, provenance_read_at: provenance.read_at });
      for (const identifier of (organization.organization_identifiers ?? []) as Json[]) await files.organization_identifier.write(identifier);
      for (const url of (organization.additional_websites ?? []) as Json[]) await files.url.write(url);
      for (const attribute of (organization.attributes ?? []) as Json[]) await files.attribute.write(attribute);
      if (++organizations % 10_000 === 0) onProgress?.(organizations);
    }
  } finally {
    await Promise.all(Object.values(files).map((file) => file.close()));
  }
  writeFileSync(join(directory, DESCRIPTOR_FILE), `${JSON.stringify(packageDescriptor(info, facts), null, 2)}\n`);
  return { version: info.version, publishedAt: info.publishedAt, rows: Object.fromEntries(TABLES.map((table) => [table, files[table].rows])) as Record<Table, number> };
}
