/**
 * Validated records keyed by native ids: what every source reader produces and the build consumes.
 * HSDS ids are derived at build time (see ids.ts), except where a source already has them (`id`).
 * `at` says where a record came from, for error messages.
 */

/** Where a record, or a problem with it, is in the source files: for messages. */
export interface SourceLocation {
  file: string;
  /** 1-based line in the file (for a CSV record spanning lines, the line where it ends). */
  line?: number;
  field?: string;
}

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

/**
 * The `taxonomy` of a term that belongs to no taxonomy of the dataset (HSDS allows it), keyed by the
 * `taxonomy_id` it names outside the input, if any, so that codes are unique per outside taxonomy.
 */
export const outsideTaxonomy = (taxonomyId: string | undefined): string => `\u0000${taxonomyId ?? ''}`;

export const isOutsideTaxonomy = (taxonomy: string): boolean => taxonomy.startsWith('\u0000');

/**
 * Set by the readers of HSDS packages: a reference to a record not in the input is a warning, and
 * what it names is served as given (a parent) or the link left out (a tag, identifier or website),
 * because a package may refer to records published elsewhere. Without it (the native format, whose
 * references are part of the format) such a reference is an error, but for a missing parent
 * organization, which is left out with a warning.
 */
interface References {
  lenientReferences?: boolean;
}

export interface TaxonomyTermRecord extends References {
  /** The code of its taxonomy in the dataset, or an outsideTaxonomy. */
  taxonomy: string;
  code: string;
  name: string;
  description: string;
  parentCode?: string;
  /**
   * The parent's served id when the source names a parent that is not a term of this term's taxonomy
   * in the input (then `parentCode` is not set). A native `parentCode` naming no term is served as
   * the id derived from it.
   */
  parentId?: string;
  /** The HSDS `taxonomy` field as the source gives it ('' when given empty); the taxonomy's code when undefined. */
  taxonomyText?: string;
  /** The served `taxonomy_id` of a term whose taxonomy is not in the input (see ids.ts servedIdOf). */
  taxonomyId?: string;
  language?: string;
  termUri?: string;
  id?: string;
  at?: SourceLocation;
  /** The source's name for the parent column, for messages (`parent_code` when not given). */
  parentField?: string;
}

/** One key for a term by its taxonomy's code and its own: a term's identity in the records. */
export const termKey = (taxonomy: string, code: string): string => `${taxonomy}\u0000${code}`;

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
  /** The free-text label, link_type and value of that attribute. */
  label?: string;
  linkType?: string;
  value?: string;
}

/** An HSDS `url` object: one of an organization's websites besides its main `website`. */
export interface UrlRecord {
  url: string;
  label?: string;
  /** An HSDS id the source already has (kept instead of the derived one). */
  id?: string;
}

/**
 * Where an organization came from: its source of record, which a record read from this API's own
 * documents (an export, a harvest, a sync) carries as given, and any other gets from the source it
 * was read from. `readAt`: when it was first read as it is, where the source says so; otherwise the
 * publish time of the version that first served it as it is.
 */
export interface ProvenanceRecord {
  /** The source's name: a publisher's dataset, an API. */
  source: string;
  /** Where in it: a file's name, or an API's base URL. */
  location: string;
  /** The organization's id in that source. */
  sourceId: string;
  readAt?: string;
}

export interface OrganizationRecord extends References {
  externalId: string;
  /**
   * The native id to serve as `external_identifier` when the source gives it apart from the id it
   * links records by (`externalId`, then the HSDS id): a package this API exported does.
   */
  nativeId?: string;
  /**
   * When the organization last changed, where the source says so (a package this API exported): served
   * as its `last_modified` instead of the publish time of the version that first served it as it is.
   */
  lastModified?: string;
  /** Where it came from (set for every organization once the sources are combined). */
  provenance?: ProvenanceRecord;
  /** Which source of the import gave it, in the order listed (0 first): the first wins an overlap. */
  sourceIndex?: number;
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
  logo?: string;
  uri?: string;
  parentExternalId?: string;
  /** The source's name for the parent column, for messages (`parent_id` when not given). */
  parentField?: string;
  identifiers: OrganizationIdentifierRecord[];
  tags: TagRecord[];
  at?: SourceLocation;
}

/** A tag given apart from its organization (e.g. a row of a tags file), by the organization's native id. */
export interface TagLink extends TagRecord, References {
  organization: string;
  at?: SourceLocation;
}

export interface IdentifierLink extends OrganizationIdentifierRecord, References {
  organization: string;
  at?: SourceLocation;
}

/** One of an organization's websites given apart from it (an HSDS `url` row). */
export interface UrlLink extends UrlRecord, References {
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
  urls?: Stream<UrlLink>;
  /**
   * Tags implied by a tag (e.g. the NTEE → Open Eligibility crosswalk), added to every organization
   * carrying it. They depend on the tag's taxonomy and code alone: the build asks once per term.
   */
  impliedTags?: (tag: TagRecord) => readonly TagRecord[];
}
