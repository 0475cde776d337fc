import { attributeId, organizationId, organizationIdentifierId, taxonomyId, taxonomyTermId, urlId } from './ids.ts';
import type { OrganizationRecord, TaxonomyRecord, TaxonomyTermRecord } from './records.ts';

/**
 * HSDS documents, rendered once at publish time. Key order is fixed so that the same records always
 * give the same bytes. Absent optional fields are omitted (never null, never "").
 */

type Json = Record<string, unknown>;

function compact(object: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === undefined || value === null || value === '') continue;
    out[key] = value;
  }
  return out;
}

export interface RenderedTaxonomy {
  id: string;
  code: string;
  object: Json;
}

export interface RenderedTerm {
  id: string;
  code: string;
  name: string;
  /** Its taxonomy in the dataset; undefined for a term of no taxonomy of the dataset. */
  taxonomy: RenderedTaxonomy | undefined;
  object: Json;
}

export function renderTaxonomy(record: TaxonomyRecord): RenderedTaxonomy {
  const id = record.id ?? taxonomyId(record.code);
  const object = {
    id,
    name: record.name,
    description: record.description,
    ...compact({ uri: record.uri, version: record.version }),
    code: record.code,
  };
  return { id, code: record.code, object };
}

export const termIdOf = (record: TaxonomyTermRecord): string => record.id ?? taxonomyTermId(record.taxonomy, record.code);

/**
 * @param parentId the parent term's HSDS id when the parent is in the dataset, in the same taxonomy;
 * otherwise the record's own `parentId` is served
 */
export function renderTerm(record: TaxonomyTermRecord, taxonomy: RenderedTaxonomy | undefined, parentId: string | undefined): RenderedTerm {
  const id = termIdOf(record);
  const object = {
    id,
    code: record.code,
    name: record.name,
    description: record.description,
    ...compact({
      parent_id: parentId ?? record.parentId,
      taxonomy: record.taxonomyText ?? taxonomy?.code,
      language: record.language,
      taxonomy_id: taxonomy?.id ?? record.taxonomyId,
      term_uri: record.termUri,
    }),
  };
  return { id, code: record.code, name: record.name, taxonomy, object };
}

/**
 * A term as the term endpoints serve it: with `children_count` (terms whose parent it is), and in its
 * single-term form also with its full taxonomy object. Terms nested in organizations stay compact.
 */
export function renderServedTerm(term: RenderedTerm, childrenCount: number): { listJson: string; detailJson: string } {
  const object = { ...term.object, children_count: childrenCount };
  return { listJson: JSON.stringify(object), detailJson: JSON.stringify({ ...object, ...compact({ taxonomy_detail: term.taxonomy?.object }) }) };
}

/**
 * Adds `read_at` to the provenance of a rendered full organization whose source did not say when it
 * was read (`provenance` is its last key: see renderOrganization).
 */
export const withReadAt = (json: string, readAt: string): string => `${json.slice(0, -2)}${readAtSuffix(readAt)}}`;

/** A rendered full organization whose provenance gives `read_at` as it would be without it: withReadAt undone. */
export const withoutReadAt = (json: string, readAt: string): string => `${json.slice(0, -readAtSuffix(readAt).length - 1)}}}`;

/** What withReadAt puts in place of the provenance's closing brace. */
export const readAtSuffix = (readAt: string): string => `,"read_at":${JSON.stringify(readAt)}}`;

/** Adds `last_modified` as the last key of a rendered organization (list or full form). */
export const withLastModified = (json: string, lastModified: string): string => `${json.slice(0, -1)}${lastModifiedSuffix(lastModified)}`;

/** What withLastModified puts in place of the closing brace. */
export const lastModifiedSuffix = (lastModified: string): string => `,"last_modified":${JSON.stringify(lastModified)}}`;

const classifications = new WeakMap<RenderedTerm, Json>();

/**
 * A term as an organization's `classifications` list it (this profile's compact form): one object per
 * term, which every organization it classifies shares (packed-documents.ts writes it as one fragment).
 */
export function classificationOf(term: RenderedTerm): Json {
  let classification = classifications.get(term);
  if (classification === undefined) {
    classification = { ...compact({ taxonomy: term.taxonomy?.code, taxonomy_id: term.taxonomy?.id }), taxonomy_term_id: term.id, code: term.code, name: term.name };
    classifications.set(term, classification);
  }
  return classification;
}

export interface RenderedOrganization {
  id: string;
  /** The full form as JSON (what the dataset's version and the content hash are made of). */
  detailJson: string;
  /** The listed and full forms, which packed-documents.ts writes packed. */
  listItem: Json;
  detail: Json;
}

export interface ResolvedTag {
  term: RenderedTerm;
  attributeId?: string;
  label?: string;
  linkType?: string;
  value?: string;
}

/**
 * @param tags the organization's tags, resolved to terms, without repeats
 * @param parentId the parent's HSDS id, only when the parent is itself published
 */
export function renderOrganization(record: OrganizationRecord, tags: readonly ResolvedTag[], parentId: string | undefined): RenderedOrganization {
  const id = organizationId(record.externalId);
  const listItem = {
    id,
    name: record.name,
    ...compact({ alternate_name: record.alternateName }),
    description: record.description ?? '',
    ...compact({
      email: record.email,
      website: record.website,
      tax_status: record.taxStatus,
      tax_id: record.taxId,
      year_incorporated: record.yearIncorporated,
      legal_status: record.legalStatus,
      logo: record.logo,
      uri: record.uri,
      parent_organization_id: parentId,
    }),
    external_identifier: record.nativeId ?? record.externalId,
    classifications: tags.map(({ term }) => classificationOf(term)),
  };
  const websites = record.additionalWebsites ?? [];
  // HSDS puts additional_websites right after website; the full form keeps the list item as it is, then adds the arrays.
  const detail = {
    ...listItem,
    ...compact({
      additional_websites: websites.length === 0 ? undefined : websites.map((website) => ({
        id: website.id ?? urlId(record.externalId, website.url),
        url: website.url,
        ...compact({ label: website.label }),
        organization_id: id,
      })),
    }),
    attributes: tags.map((tag) => ({
      id: tag.attributeId ?? attributeId(record.externalId, tag.term.taxonomy?.code ?? '', tag.term.code),
      link_id: id,
      link_entity: 'organization',
      taxonomy_term_id: tag.term.id,
      ...compact({ link_type: tag.linkType, value: tag.value }),
      taxonomy_term: tag.term.object,
      ...compact({ label: tag.label }),
    })),
    organization_identifiers: record.identifiers.map((identifier) => ({
      id: identifier.id ?? organizationIdentifierId(record.externalId, identifier.scheme ?? '', identifier.identifier),
      organization_id: id,
      ...compact({ identifier_scheme: identifier.scheme }),
      identifier_type: identifier.type,
      identifier: identifier.identifier,
    })),
    // The last key: a `read_at` the source does not give is added at publish (withReadAt).
    ...(record.provenance === undefined
      ? {}
      : { provenance: { source: record.provenance.source, location: record.provenance.location, source_id: record.provenance.sourceId, ...compact({ read_at: record.provenance.readAt }) } }),
  };
  return { id, detailJson: JSON.stringify(detail), listItem, detail };
}
