import { basename } from 'node:path';
import { RowFields } from './files/fields.ts';
import { readRows, TABULAR_FILE } from './files/rows.ts';
import type { Columns } from './files/csv.ts';
import type { ReadContext, Source } from './source.ts';
import type { IdentifierLink, OrganizationRecord, PublicationStatus, TagLink, TaxonomyRecord, TaxonomyTermRecord } from '../hsds/records.ts';

/**
 * The project's own format (docs/data-format.md): CSV or NDJSON files, one per kind of record,
 * named by role, keyed by the publisher's native ids.
 */
export const NATIVE_COLUMNS = {
  taxonomies: { required: ['code', 'name'], optional: ['description', 'uri', 'version'] },
  taxonomy_terms: { required: ['taxonomy', 'code', 'name'], optional: ['description', 'parent_code', 'term_uri'] },
  organizations: {
    required: ['id', 'name', 'status'],
    optional: [
      'alternate_name',
      'description',
      'email',
      'website',
      'tax_status',
      'tax_id',
      'year_incorporated',
      'legal_status',
      'uri',
      'parent_id',
    ],
  },
  organization_tags: { required: ['organization_id', 'taxonomy', 'term_code'], optional: [] },
  organization_identifiers: { required: ['organization_id', 'type', 'identifier'], optional: ['scheme'] },
} as const satisfies Record<string, Columns>;

export type NativeRole = keyof typeof NATIVE_COLUMNS;

const STATUSES: readonly PublicationStatus[] = ['published', 'unpublished'];

/**
 * The role of a native file from its name (`organizations.csv`, `organization_tags.ndjson.gz`, ...),
 * ignoring case: `Organizations.CSV` is what a spreadsheet or another system may well save.
 */
export function nativeRoleOf(file: string): NativeRole | undefined {
  const name = basename(file).toLowerCase().replace(TABULAR_FILE, '');
  if (!TABULAR_FILE.test(file) || !Object.hasOwn(NATIVE_COLUMNS, name)) return undefined;
  return name as NativeRole;
}

async function* rowsOf(files: readonly string[], role: NativeRole, context: ReadContext) {
  for (const file of files) {
    if (nativeRoleOf(file) !== role) continue;
    for await (const row of readRows(file, NATIVE_COLUMNS[role], context)) yield new RowFields(file, row, context.diagnostics);
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

async function* taxonomies(files: readonly string[], context: ReadContext): AsyncGenerator<TaxonomyRecord> {
  for await (const row of rowsOf(files, 'taxonomies', context)) {
    const record: TaxonomyRecord = {
      code: row.required('code', 'code'),
      name: row.required('name', 'name'),
      description: row.optional('description', 'description') ?? '',
      uri: row.url('uri'),
      version: row.optional('version', 'text'),
      at: row.at(),
    };
    if (row.valid) yield record;
  }
}

async function* terms(files: readonly string[], context: ReadContext): AsyncGenerator<TaxonomyTermRecord> {
  for await (const row of rowsOf(files, 'taxonomy_terms', context)) {
    const record: TaxonomyTermRecord = {
      taxonomy: row.required('taxonomy', 'code'),
      code: row.required('code', 'code'),
      name: row.required('name', 'name'),
      description: row.optional('description', 'description') ?? '',
      parentCode: row.optionalId('parent_code', 'code'),
      termUri: row.url('term_uri'),
      at: row.at(),
    };
    if (row.valid) yield record;
  }
}

/** The organization columns that the native format shares with the HSDS `organizations` table. */
export function organizationDetails(row: RowFields) {
  return {
    name: row.required('name', 'name'),
    alternateName: row.optional('alternate_name', 'name'),
    description: row.optional('description', 'description'),
    email: row.email('email'),
    website: row.url('website'),
    taxStatus: row.optional('tax_status', 'text'),
    taxId: row.optional('tax_id', 'identifier'),
    yearIncorporated: row.year('year_incorporated'),
    legalStatus: row.optional('legal_status', 'text'),
    uri: row.url('uri'),
  };
}

async function* organizations(files: readonly string[], context: ReadContext): AsyncGenerator<OrganizationRecord> {
  for await (const row of rowsOf(files, 'organizations', context)) {
    const record: OrganizationRecord = {
      externalId: row.required('id', 'id'),
      status: row.oneOf('status', STATUSES) ?? 'unpublished',
      ...organizationDetails(row),
      parentExternalId: row.optionalId('parent_id', 'id'),
      identifiers: [],
      tags: [],
      at: row.at(),
    };
    if (row.valid) yield record;
  }
}

async function* tags(files: readonly string[], context: ReadContext): AsyncGenerator<TagLink> {
  for await (const row of rowsOf(files, 'organization_tags', context)) {
    const link: TagLink = {
      organization: row.required('organization_id', 'id'),
      taxonomy: row.required('taxonomy', 'code'),
      code: row.required('term_code', 'code'),
      at: row.at('organization_id'),
    };
    if (row.valid) yield link;
  }
}

async function* identifiers(files: readonly string[], context: ReadContext): AsyncGenerator<IdentifierLink> {
  for await (const row of rowsOf(files, 'organization_identifiers', context)) {
    const link: IdentifierLink = {
      organization: row.required('organization_id', 'id'),
      scheme: row.optional('scheme', 'identifier'),
      type: row.required('type', 'text'),
      identifier: row.required('identifier', 'identifier'),
      at: row.at('organization_id'),
    };
    if (row.valid) yield link;
  }
}

/** A native source made of the given files (each named by its role). */
export function nativeSource(path: string, files: readonly string[]): Source {
  return {
    kind: 'native',
    path,
    files,
    taxonomies: (context) => collect(taxonomies(files, context)),
    terms: (context) => collect(terms(files, context)),
    organizations: (context) => organizations(files, context),
    tags: (context) => tags(files, context),
    identifiers: (context) => identifiers(files, context),
  };
}
