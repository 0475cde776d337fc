import type { SourceLocation } from '../publish/diagnostics.ts';

/**
 * Validated records keyed by native ids: what every source reader produces and the build consumes.
 * HSDS ids are derived at build time (see ids.ts), except where a source already has them (`id`).
 * `at` says where a record came from, for error messages.
 */

export interface TaxonomyRecord {
  code: string;
  /** An HSDS id the source already has (kept instead of the derived one). */
  id?: string;
  at?: SourceLocation;
  name: string;
  description: string;
  uri?: string;
  version?: string;
}

export interface TaxonomyTermRecord {
  taxonomy: string;
  code: string;
  name: string;
  description: string;
  parentCode?: string;
  termUri?: string;
  id?: string;
  at?: SourceLocation;
  /** The source's name for the parent column, for messages (`parent_code` when not given). */
  parentField?: string;
}

export type PublicationStatus = 'published' | 'unpublished';

export interface OrganizationIdentifierRecord {
  scheme?: string;
  type: string;
  identifier: string;
  id?: string;
}

export interface TagRecord {
  taxonomy: string;
  code: string;
  /** The id of the HSDS attribute that carries this tag, when the source has one. */
  attributeId?: string;
  /** The free-text label of that attribute. */
  label?: string;
}

/** An HSDS `url` object: one of an organization's websites besides its main `website`. */
export interface UrlRecord {
  url: string;
  label?: string;
  /** An HSDS id the source already has (kept instead of the derived one). */
  id?: string;
}

export interface OrganizationRecord {
  externalId: string;
  status: PublicationStatus;
  name: string;
  description?: string;
  alternateName?: string;
  email?: string;
  website?: string;
  additionalWebsites?: UrlRecord[];
  taxStatus?: string;
  taxId?: string;
  yearIncorporated?: number;
  legalStatus?: string;
  uri?: string;
  parentExternalId?: string;
  /** The source's name for the parent column, for messages (`parent_id` when not given). */
  parentField?: string;
  identifiers: OrganizationIdentifierRecord[];
  tags: TagRecord[];
  at?: SourceLocation;
}

/** A tag given apart from its organization (e.g. a row of a tags file), by the organization's native id. */
export interface TagLink extends TagRecord {
  organization: string;
  at?: SourceLocation;
}

export interface IdentifierLink extends OrganizationIdentifierRecord {
  organization: string;
  at?: SourceLocation;
}

type Stream<T> = AsyncIterable<T> | Iterable<T>;

/** A whole dataset to publish. Organizations and links stream; taxonomies and terms are small. */
export interface DatasetInput {
  taxonomies: TaxonomyRecord[];
  terms: TaxonomyTermRecord[];
  organizations: Stream<OrganizationRecord>;
  tags?: Stream<TagLink>;
  identifiers?: Stream<IdentifierLink>;
  /** Tags implied by a tag (e.g. the NTEE → Open Eligibility crosswalk), added to every organization carrying it. */
  impliedTags?: (tag: TagRecord) => readonly TagRecord[];
}
