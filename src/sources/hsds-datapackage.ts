import { basename } from 'node:path';
import { RowFields } from './files/fields.ts';
import { readRows } from './files/rows.ts';
import { packageLayout } from './hsds-package-layout.ts';
import type { HsdsTable } from './hsds-package-layout.ts';
import type { Columns } from './files/csv.ts';
import { counted } from '../text.ts';
import type { Diagnostics } from './files/diagnostics.ts';
import type { ReadContext, Source } from './source.ts';
import { readHsdsVocabulary, servedId } from './hsds-vocabulary.ts';
import type { HsdsVocabulary, TermRef } from './hsds-vocabulary.ts';
import { canonicalId } from '../hsds/ids.ts';
import type { IdentifierLink, OrganizationRecord, ProvenanceRecord, TagLink, UrlLink } from '../hsds/records.ts';

/**
 * HSDS tabular packages, 1.0 to 3.2 (see docs/data-format.md): a folder of CSV files named after HSDS
 * tables, optionally with a `datapackage.json`. Only the tables this API serves are read, and the
 * service tables that link tags to organizations; any other file is named in a warning. Each table's
 * columns are those of its HSDS schemas, so no HSDS column draws an "unknown column" warning.
 *
 * A reference HSDS declares no foreign key for, or one to a row not in the package, is a warning,
 * never a refusal: the package may refer to records published elsewhere. What happens to each is
 * documented beside the reference below.
 */
export const HSDS_COLUMNS = {
  organizations: {
    required: ['id', 'name'],
    optional: [
      'alternate_name',
      'description',
      'email',
      'website',
      // 1.x and 2.0 call the website `url`.
      'url',
      'tax_status',
      'tax_id',
      'year_incorporated',
      'legal_status',
      'logo',
      'uri',
      'parent_organization_id',
      'external_identifier',
      'last_modified',
      'provenance_source',
      'provenance_location',
      'provenance_source_id',
      'provenance_read_at',
    ],
  },
  // `code`, and the organizations' `external_identifier`, `last_modified` and `provenance_*`: this
  // API's extension fields, as its export writes them (exchange/tabular-package.ts).
  taxonomies: { required: ['id', 'name'], optional: ['description', 'uri', 'version', 'code'] },
  taxonomy_terms: { required: ['id', 'name'], optional: ['code', 'description', 'parent_id', 'taxonomy', 'language', 'taxonomy_id', 'term_uri'] },
  taxonomy_terms_v2: { required: ['id', 'term'], optional: ['description', 'parent_id', 'taxonomy', 'language'] },
  taxonomy_v1: { required: ['id', 'name'], optional: ['parent_id', 'parent_name', 'vocabulary', 'taxonomy_facet'] },
  attributes: { required: ['id', 'link_id', 'taxonomy_term_id', 'link_entity'], optional: ['link_type', 'value', 'label'] },
  organization_identifiers: { required: ['id', 'organization_id', 'identifier_type', 'identifier'], optional: ['identifier_scheme'] },
  urls: { required: ['id', 'url'], optional: ['label', 'organization_id', 'service_id'] },
  // Only the link to the organization is read; the other columns of a service are not looked at.
  services: { required: ['id', 'organization_id'] },
  services_taxonomy: { required: ['service_id', 'taxonomy_id'], optional: ['id', 'taxonomy_detail'] },
  service_attributes: { required: ['service_id', 'taxonomy_term_id'], optional: ['id'] },
  other_attributes: { required: ['link_id', 'link_type', 'taxonomy_term_id'], optional: ['id'] },
} as const satisfies Record<HsdsTable, Columns>;


/** One value per import (per Diagnostics), made once however many readers ask for it. */
export function perImport<T>(make: (context: ReadContext) => Promise<T>): (context: ReadContext) => Promise<T> {
  const made = new WeakMap<Diagnostics, Promise<T>>();
  return (context) => {
    let promise = made.get(context.diagnostics);
    if (promise === undefined) {
      promise = make(context);
      made.set(context.diagnostics, promise);
    }
    return promise;
  };
}

/**
 * Where the tables of an HSDS package come from: a folder of files, or an HSDS API read into one
 * (hsds-api.ts). `rowsOf` gives the rows of a table (nothing when it is absent; organizations: an
 * error); `fileOf` names a table's file in messages; `readable` reports the tables' own problems
 * once per import, and says whether they can be read.
 */
export interface HsdsTables {
  kind: 'hsds' | 'hsds-api';
  path: string;
  files: readonly string[];
  fileOf(table: HsdsTable): string;
  has(table: HsdsTable): boolean;
  readable(context: ReadContext): Promise<boolean>;
  rowsOf(table: HsdsTable, context: ReadContext): AsyncGenerator<RowFields>;
}

/** A folder of HSDS tables: taxonomies, terms, organizations, their attributes, identifiers, websites, and tags of their services. */
export function hsdsDatapackageSource(directory: string): Source {
  const layout = packageLayout(directory);

  /** Reports the layout's problems and what it found, once per import; true when the tables can be read. */
  const readable = perImport(async (context) => {
    const { diagnostics } = context;
    for (const { message, ...at } of [...layout.problems, ...layout.caseTwins]) diagnostics.error(at, message);
    if (layout.problems.length > 0) return false;
    diagnostics.note('HSDS package read', { file: directory }, `read as HSDS ${layout.version}: ${layout.present.map((file) => basename(file)).join(', ')}`);
    for (const { message, ...at } of layout.listedButMissing) diagnostics.note('table listed in datapackage.json but not in the folder', at, message);
    if (layout.unread.length > 0) diagnostics.warning('file not read', { file: directory }, `not read (this API serves organizations and taxonomies only): ${layout.unread.join(', ')}`);
    return true;
  });

  async function* rowsOf(table: HsdsTable, context: ReadContext): AsyncGenerator<RowFields> {
    if (!(await readable(context))) return;
    const files = layout.files.get(table);
    if (files === undefined) {
      if (table === 'organizations') context.diagnostics.error({ file: directory }, 'no organizations.csv: an HSDS package needs its organizations table');
      return;
    }
    for (const file of files) {
      for await (const row of readRows(file, HSDS_COLUMNS[table], context)) yield new RowFields(file, row, context.diagnostics);
    }
  }

  return hsdsTablesSource({
    kind: 'hsds',
    path: directory,
    files: layout.present,
    fileOf: (table) => basename(layout.files.get(table)?.[0] ?? `${table}.csv`),
    has: (table) => layout.files.has(table),
    readable,
    rowsOf,
  });
}

/** Where an organization came from, where this API's export wrote it (its `provenance_*` columns): all three names, or none. */
function provenanceOf(row: RowFields): ProvenanceRecord | undefined {
  const source = row.optionalId('provenance_source', 'name');
  const location = row.optionalId('provenance_location', 'url');
  const sourceId = row.optionalId('provenance_source_id', 'id');
  if (source === undefined || location === undefined || sourceId === undefined) return undefined;
  return { source, location, sourceId, readAt: row.instant('provenance_read_at') };
}

/** The records of an HSDS package, from its tables wherever they come from. */
export function hsdsTablesSource(tables: HsdsTables): Source {
  const { fileOf, rowsOf } = tables;
  const directory = tables.path;
  const termFile = (): string => fileOf(tables.has('taxonomy_v1') ? 'taxonomy_v1' : tables.has('taxonomy_terms_v2') ? 'taxonomy_terms_v2' : 'taxonomy_terms');
  const readable = (context: ReadContext) => tables.readable(context);

  const vocabulary = perImport(async (context): Promise<HsdsVocabulary> =>
    (await readable(context)) ? readHsdsVocabulary(context, rowsOf, fileOf('taxonomies')) : { taxonomies: [], terms: [], termsById: new Map() },
  );

  /** Each service's organization, for the tags of services (this profile serves them on the organization). */
  const servicesOf = perImport(async (context) => {
    const organizationOf = new Map<string, string>();
    for await (const row of rowsOf('services', context)) {
      const id = canonicalId(row.required('id', 'id'));
      const organization = row.optionalId('organization_id', 'id');
      if (row.valid && organization !== undefined) organizationOf.set(id, canonicalId(organization));
    }
    return organizationOf;
  });

  async function* organizations(context: ReadContext): AsyncGenerator<OrganizationRecord> {
    let websiteColumn: 'website' | 'url' | undefined;
    for await (const row of rowsOf('organizations', context)) {
      websiteColumn ??= row.has('website') || !row.has('url') ? 'website' : 'url';
      const parent = row.optionalId('parent_organization_id', 'id');
      const record: OrganizationRecord = {
        externalId: canonicalId(row.required('id', 'id')),
        nativeId: row.optionalId('external_identifier', 'id'),
        lastModified: row.instant('last_modified'),
        provenance: provenanceOf(row),
        // HSDS has no publication status: every organization given is published.
        status: 'published',
        name: row.required('name', 'name'),
        alternateName: row.optional('alternate_name', 'name'),
        description: row.optional('description', 'description'),
        email: row.email('email'),
        website: row.website(websiteColumn),
        taxStatus: row.optional('tax_status', 'text'),
        taxId: row.optional('tax_id', 'identifier'),
        yearIncorporated: row.year('year_incorporated'),
        legalStatus: row.optional('legal_status', 'text'),
        logo: row.url('logo'),
        uri: row.url('uri'),
        parentExternalId: parent === undefined ? undefined : canonicalId(parent),
        parentField: 'parent_organization_id',
        identifiers: [],
        tags: [],
        lenientReferences: true,
        at: row.at(),
      };
      if (row.valid) yield record;
    }
  }

  /** The term with this id; a term not in the package leaves the tag out, with a warning. */
  function termOf(row: RowFields, column: string, termsById: ReadonlyMap<string, TermRef>, context: ReadContext): TermRef | undefined {
    const termId = row.required(column, 'id');
    if (termId === '') return undefined;
    const term = termsById.get(canonicalId(termId));
    if (term === undefined) context.diagnostics.danglingReference(row.at(column), `names term ${termId}, which is not in ${termFile()}; left out`, 'tag naming a term not in the package');
    return term;
  }

  /** The organization of a service; a service not in the package leaves its tag out, with a warning. */
  function serviceOrganization(row: RowFields, column: string, organizationOf: ReadonlyMap<string, string>, context: ReadContext): string | undefined {
    const service = canonicalId(row.required(column, 'id'));
    const organization = organizationOf.get(service);
    if (organization === undefined && service !== '') {
      context.diagnostics.danglingReference(row.at(column), `names service ${service}, which is not in ${fileOf('services')} (or has no organization_id); left out`, 'tag of a service not in the package');
    }
    return organization;
  }

  async function* tags(context: ReadContext): AsyncGenerator<TagLink> {
    const { termsById } = await vocabulary(context);
    const organizationOf = await servicesOf(context);
    let ofServices = 0;
    const serviceTag = (organization: string, term: TermRef, row: RowFields): TagLink => {
      ofServices++;
      return { organization, ...term, lenientReferences: true, at: row.at('service_id') };
    };
    for await (const row of rowsOf('attributes', context)) {
      const entity = row.optionalId('link_entity', 'text')?.toLowerCase();
      if (entity !== 'organization' && entity !== 'service') {
        row.warning(
          'attribute not linked to an organization or service',
          'link_entity',
          `is "${entity ?? ''}", not "organization" or "service": only the attributes of organizations and their services are imported; skipped`,
        );
        continue;
      }
      const term = termOf(row, 'taxonomy_term_id', termsById, context);
      if (entity === 'service') {
        const organization = serviceOrganization(row, 'link_id', organizationOf, context);
        if (term !== undefined && organization !== undefined && row.valid) yield { ...serviceTag(organization, term, row), at: row.at('link_id') };
        continue;
      }
      const id = canonicalId(row.required('id', 'id'));
      const link: TagLink = {
        organization: canonicalId(row.required('link_id', 'id')),
        ...(term ?? { taxonomy: '', code: '' }),
        attributeId: servedId(id),
        linkType: row.optional('link_type', 'text'),
        value: row.optional('value', 'text'),
        label: row.optional('label', 'text'),
        lenientReferences: true,
        at: row.at('link_id'),
      };
      if (term !== undefined && row.valid) yield link;
    }
    for (const table of ['services_taxonomy', 'service_attributes'] as const) {
      const termColumn = table === 'services_taxonomy' ? 'taxonomy_id' : 'taxonomy_term_id';
      for await (const row of rowsOf(table, context)) {
        const term = termOf(row, termColumn, termsById, context);
        const organization = serviceOrganization(row, 'service_id', organizationOf, context);
        if (term !== undefined && organization !== undefined && row.valid) yield serviceTag(organization, term, row);
      }
    }
    for await (const row of rowsOf('other_attributes', context)) {
      const linkType = row.required('link_type', 'text').toLowerCase();
      if (linkType !== 'organization') {
        row.warning('attribute not linked to an organization or service', 'link_type', `is "${linkType}", not "organization": skipped`);
        continue;
      }
      const term = termOf(row, 'taxonomy_term_id', termsById, context);
      const organization = canonicalId(row.required('link_id', 'id'));
      if (term !== undefined && row.valid) yield { organization, ...term, lenientReferences: true, at: row.at('link_id') };
    }
    if (ofServices > 0) {
      context.diagnostics.note('tags of services given to their organizations', { file: directory }, `${counted(ofServices, 'tag')} of services read, each given to its service's organization (a term once per organization; tags of organizations not in the package are left out, see above)`);
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
        lenientReferences: true,
        at: row.at('organization_id'),
      };
      if (row.valid) yield link;
    }
  }

  /** 3.1+ `url` rows of organizations, as their additional websites; those of services are not served (no services here). */
  async function* urls(context: ReadContext): AsyncGenerator<UrlLink> {
    for await (const row of rowsOf('urls', context)) {
      const organization = row.optionalId('organization_id', 'id');
      if (organization === undefined) {
        if (row.optionalId('service_id', 'id') !== undefined) context.diagnostics.note('website of a service (not served)', row.at('service_id'), 'this profile has no services; left out');
        else row.warning('website of nothing', 'organization_id', 'has neither organization_id nor service_id; left out');
        continue;
      }
      const id = canonicalId(row.required('id', 'id'));
      const url = row.website('url');
      const link: UrlLink = { organization: canonicalId(organization), url: url ?? '', label: row.optional('label', 'text'), id: servedId(id), lenientReferences: true, at: row.at('organization_id') };
      if (url !== undefined && row.valid) yield link;
    }
  }

  return {
    kind: tables.kind,
    path: directory,
    files: tables.files,
    taxonomies: async (context) => (await vocabulary(context)).taxonomies,
    terms: async (context) => (await vocabulary(context)).terms,
    organizations: (context) => organizations(context),
    tags: (context) => tags(context),
    identifiers: (context) => identifiers(context),
    urls: (context) => urls(context),
  };
}
