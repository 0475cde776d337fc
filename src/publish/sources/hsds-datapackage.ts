import { basename } from 'node:path';
import { RowFields } from '../fields.ts';
import { readRows } from '../rows.ts';
import { packageLayout } from './hsds-package-layout.ts';
import type { HsdsTable } from './hsds-package-layout.ts';
import type { Columns } from '../csv.ts';
import type { Diagnostics } from '../diagnostics.ts';
import type { ReadContext, Source } from './source.ts';
import { canonicalId, isUuid, missingTermId, servedIdOf, taxonomyId as derivedTaxonomyId } from '../../hsds/ids.ts';
import { termIdOf } from '../../hsds/render.ts';
import { isOutsideTaxonomy, outsideTaxonomy } from '../../hsds/records.ts';
import type { IdentifierLink, OrganizationRecord, TagLink, TaxonomyRecord, TaxonomyTermRecord, UrlLink } from '../../hsds/records.ts';

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
    ],
  },
  taxonomies: { required: ['id', 'name'], optional: ['description', 'uri', 'version'] },
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

/** The id to serve: only a UUID is kept (the API looks things up by UUID); otherwise the build derives one. */
const servedId = (value: string): string | undefined => (isUuid(value) ? value.toLowerCase() : undefined);

/** The code of the taxonomy of 1.x terms without a vocabulary: fixed, so that renaming the folder changes no id. */
const UNNAMED_TAXONOMY = 'taxonomy';

/** A taxonomy code made of a 1.x vocabulary or a 2.0 `taxonomy` name: `Open211 Miami - AIRS` → `open211-miami-airs`. */
const codeOfName = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || UNNAMED_TAXONOMY;

interface TermRef {
  taxonomy: string;
  code: string;
}

/** Taxonomies and terms, read once per import (per Diagnostics) because terms and tags both need them. */
interface HsdsVocabulary {
  taxonomies: TaxonomyRecord[];
  terms: TaxonomyTermRecord[];
  /** A kept term's id in the package → its taxonomy code and term code. */
  termsById: Map<string, TermRef>;
}

/** One value per import (per Diagnostics), made once however many readers ask for it. */
function perImport<T>(make: (context: ReadContext) => Promise<T>): (context: ReadContext) => Promise<T> {
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

/** A folder of HSDS tables: taxonomies, terms, organizations, their attributes, identifiers, websites, and tags of their services. */
export function hsdsDatapackageSource(directory: string): Source {
  const layout = packageLayout(directory);
  const fileOf = (table: HsdsTable): string => basename(layout.files.get(table)?.[0] ?? `${table}.csv`);
  const termFile = (): string => fileOf(layout.files.has('taxonomy_v1') ? 'taxonomy_v1' : layout.files.has('taxonomy_terms_v2') ? 'taxonomy_terms_v2' : 'taxonomy_terms');

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

  /** The rows of a table, every file of it in turn; nothing when it is absent (organizations: an error). */
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

  interface ReadTerm {
    record: TaxonomyTermRecord;
    termId: string;
    parentId: string | undefined;
  }

  /**
   * 3.x and 2.0 terms. A 3.x term's `taxonomy_id` may be empty (HSDS makes it optional) or name a
   * taxonomy not in the package (a warning): the term is served in no taxonomy of the dataset, with
   * `taxonomy_id` as given. 2.0 has no taxonomy table: the vocabulary its `taxonomy` names becomes a
   * taxonomy of the dataset.
   */
  async function readTerms(context: ReadContext, taxonomies: TaxonomyRecord[]): Promise<ReadTerm[]> {
    const taxonomyCodes = new Set(taxonomies.map((taxonomy) => taxonomy.code));
    const read: ReadTerm[] = [];
    const firstLine = new Map<string, number>();
    for (const table of ['taxonomy_terms', 'taxonomy_terms_v2'] as const) {
      for await (const row of rowsOf(table, context)) {
        const termId = canonicalId(row.required('id', 'id'));
        const taxonomyText = row.optional('taxonomy', 'text');
        const given = table === 'taxonomy_terms' ? row.optional('taxonomy_id', 'id') : undefined;
        let taxonomy = outsideTaxonomy(undefined);
        let taxonomyId: string | undefined;
        if (table === 'taxonomy_terms_v2') {
          if (taxonomyText !== undefined) taxonomy = codeOfName(taxonomyText);
        } else if (given !== undefined && taxonomyCodes.has(canonicalId(given))) {
          taxonomy = canonicalId(given);
        } else if (given !== undefined) {
          taxonomy = outsideTaxonomy(canonicalId(given));
          taxonomyId = servedIdOf(given, derivedTaxonomyId);
          context.diagnostics.danglingReference(
            row.at('taxonomy_id'),
            `names taxonomy ${given}, which is not in ${fileOf('taxonomies')}; the term is served with this taxonomy_id, in no taxonomy of the dataset`,
            'term of a taxonomy not in the package',
          );
        }
        const parentId = row.optional('parent_id', 'id');
        const record: TaxonomyTermRecord = {
          taxonomy,
          // Codes must be unique within a taxonomy; a term without one is known by its id.
          code: (table === 'taxonomy_terms' ? row.optional('code', 'code') : undefined) ?? termId,
          id: servedId(termId),
          name: row.required(table === 'taxonomy_terms' ? 'name' : 'term', 'name'),
          description: row.optional('description', 'description') ?? '',
          taxonomyText: taxonomyText ?? '',
          taxonomyId,
          language: row.optional('language', 'text'),
          termUri: table === 'taxonomy_terms' ? row.url('term_uri') : undefined,
          lenientReferences: true,
          at: row.at(),
        };
        if (termId !== '') {
          const first = firstLine.get(termId);
          if (first !== undefined) row.error('id', `${termId} is already the id of the term on line ${first}`);
          else firstLine.set(termId, row.line);
        }
        if (row.valid) read.push({ record, termId, parentId: parentId === undefined ? undefined : canonicalId(parentId) });
      }
    }
    return read;
  }

  /**
   * 1.x `taxonomy.csv`: terms whose code is their id, in the taxonomy their `vocabulary` names. A
   * repeated id keeps its first row, with a warning: 1.x declares no key.
   */
  async function readVersion1Terms(context: ReadContext): Promise<{ taxonomies: TaxonomyRecord[]; read: ReadTerm[] }> {
    const taxonomies = new Map<string, TaxonomyRecord>();
    const read: ReadTerm[] = [];
    const firstLine = new Map<string, number>();
    for await (const row of rowsOf('taxonomy_v1', context)) {
      const termId = canonicalId(row.required('id', 'code'));
      const vocabulary = row.optional('vocabulary', 'name');
      const code = vocabulary === undefined ? UNNAMED_TAXONOMY : codeOfName(vocabulary);
      if (!taxonomies.has(code)) taxonomies.set(code, { code, name: vocabulary ?? 'Taxonomy', description: '', at: row.at('vocabulary') });
      const record: TaxonomyTermRecord = {
        taxonomy: code,
        code: termId,
        id: servedId(termId),
        name: row.required('name', 'name'),
        description: '',
        taxonomyText: vocabulary ?? '',
        lenientReferences: true,
        at: row.at(),
      };
      const parentId = row.optional('parent_id', 'code');
      if (!row.valid) continue;
      const first = firstLine.get(termId);
      if (first !== undefined) {
        row.warning('term defined twice (the first is kept)', 'id', `${termId} is already the id of the term on line ${first}; this row is left out`);
        continue;
      }
      firstLine.set(termId, row.line);
      read.push({ record, termId, parentId: parentId === undefined ? undefined : canonicalId(parentId) });
    }
    return { taxonomies: [...taxonomies.values()], read };
  }

  /**
   * Links parents by id. A parent in the term's own taxonomy is linked by its code (the build checks
   * the tree); any other parent is served as given, with a warning: its id when it is in the package
   * (in another taxonomy), else the id given (HSDS declares no reference for parent_id).
   */
  function linkParents(context: ReadContext, read: readonly ReadTerm[]): void {
    const byId = new Map(read.map((term) => [term.termId, term.record]));
    for (const { record, parentId } of read) {
      if (parentId === undefined) continue;
      record.parentField = 'parent_id';
      const parent = byId.get(parentId);
      if (parent !== undefined && parent.taxonomy === record.taxonomy) {
        record.parentCode = parent.code;
        continue;
      }
      record.parentId = parent === undefined ? servedIdOf(parentId, (id) => missingTermId(record.taxonomy, id)) : termIdOf(parent);
      const where = parent === undefined ? 'which is not in the package' : 'which is in another taxonomy';
      context.diagnostics.danglingReference({ ...record.at!, field: 'parent_id' }, `names term ${parentId}, ${where}; served as given`, 'term whose parent is not in its taxonomy in the package');
    }
  }

  const vocabulary = perImport(async (context): Promise<HsdsVocabulary> => {
    if (!(await readable(context))) return { taxonomies: [], terms: [], termsById: new Map() };
    const taxonomies = await readTaxonomies(context);
    const read = await readTerms(context, taxonomies);
    const version1 = await readVersion1Terms(context);
    // 2.0 taxonomies come from the names its terms give.
    const known = new Set(taxonomies.map((taxonomy) => taxonomy.code));
    for (const { record } of read) {
      if (isOutsideTaxonomy(record.taxonomy) || known.has(record.taxonomy)) continue;
      known.add(record.taxonomy);
      taxonomies.push({ code: record.taxonomy, name: record.taxonomyText!, description: '', at: record.at });
    }
    taxonomies.push(...version1.taxonomies);
    const all = [...read, ...version1.read];
    linkParents(context, all);
    return {
      taxonomies,
      terms: all.map(({ record }) => record),
      termsById: new Map(all.map(({ record, termId }) => [termId, { taxonomy: record.taxonomy, code: record.code }])),
    };
  });

  /** Each service's organization, for the tags of services (this profile serves them on the organization). */
  const servicesOf = perImport(async (context) => {
    const organizationOf = new Map<string, string>();
    for await (const row of rowsOf('services', context)) {
      const id = canonicalId(row.required('id', 'id'));
      const organization = row.optional('organization_id', 'id');
      if (row.valid && organization !== undefined) organizationOf.set(id, canonicalId(organization));
    }
    return organizationOf;
  });

  async function* organizations(context: ReadContext): AsyncGenerator<OrganizationRecord> {
    let websiteColumn: 'website' | 'url' | undefined;
    for await (const row of rowsOf('organizations', context)) {
      websiteColumn ??= row.has('website') || !row.has('url') ? 'website' : 'url';
      const parent = row.optional('parent_organization_id', 'id');
      const record: OrganizationRecord = {
        externalId: canonicalId(row.required('id', 'id')),
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
      const entity = row.optional('link_entity', 'text')?.toLowerCase();
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
      context.diagnostics.note('tags of services given to their organizations', { file: directory }, `${ofServices.toLocaleString('en-US')} tags of services read, each given to its service's organization (a term once per organization; tags of organizations not in the package are left out, see above)`);
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
      const organization = row.optional('organization_id', 'id');
      if (organization === undefined) {
        if (row.optional('service_id', 'id') !== undefined) context.diagnostics.note('website of a service (not served)', row.at('service_id'), 'this profile has no services; left out');
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
    kind: 'hsds',
    path: directory,
    files: layout.present,
    taxonomies: async (context) => (await vocabulary(context)).taxonomies,
    terms: async (context) => (await vocabulary(context)).terms,
    organizations: (context) => organizations(context),
    tags: (context) => tags(context),
    identifiers: (context) => identifiers(context),
    urls: (context) => urls(context),
  };
}
