/**
 * Validated records keyed by native ids: what every source reader produces and the build consumes.
 * No HSDS ids here; those are derived at build time (see ids.ts).
 */

export interface TaxonomyRecord {
  code: string;
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
}

export type PublicationStatus = 'published' | 'unpublished';

export interface OrganizationIdentifierRecord {
  scheme: string;
  type: string;
  identifier: string;
}

export interface TagRecord {
  taxonomy: string;
  code: string;
}

export interface OrganizationRecord {
  externalId: string;
  status: PublicationStatus;
  name: string;
  description?: string;
  alternateName?: string;
  email?: string;
  website?: string;
  taxStatus?: string;
  taxId?: string;
  yearIncorporated?: number;
  legalStatus?: string;
  uri?: string;
  parentExternalId?: string;
  identifiers: OrganizationIdentifierRecord[];
  tags: TagRecord[];
}

/** A whole dataset to publish. Organizations stream; taxonomies and terms are small. */
export interface DatasetInput {
  taxonomies: TaxonomyRecord[];
  terms: TaxonomyTermRecord[];
  organizations: AsyncIterable<OrganizationRecord> | Iterable<OrganizationRecord>;
}
