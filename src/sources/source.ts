import type { Diagnostics } from './files/diagnostics.ts';
import type { IdentifierLink, OrganizationRecord, TagLink, TagRecord, TaxonomyRecord, TaxonomyTermRecord, UrlLink } from '../hsds/records.ts';

export interface ReadContext {
  diagnostics: Diagnostics;
  /** Bytes read from disk, for the progress bar. */
  onBytes?: (bytes: number) => void;
  /** Items read so far by a source that is not files (an API's): for the progress display. */
  onItems?: (items: number) => void;
}

/** The taxonomies and terms of every source, known before any organization is read. */
export interface Vocabulary {
  hasTaxonomy(code: string): boolean;
  hasTerm(taxonomy: string, code: string): boolean;
  parentOf(taxonomy: string, code: string): string | undefined;
}

/**
 * One input to an import, of one kind. Every part is optional: a source may bring only
 * taxonomies, only organizations, only tags... Several sources combine into one dataset.
 * Readers report problems to `context.diagnostics` and skip bad rows; they never throw on bad data.
 */
export interface Source {
  kind: SourceKind;
  /** What was given on the command line. */
  path: string;
  /** Every file read, for the progress total. */
  files: readonly string[];
  taxonomies?(context: ReadContext): Promise<TaxonomyRecord[]>;
  terms?(context: ReadContext): Promise<TaxonomyTermRecord[]>;
  /** Tags implied by a tag, e.g. a crosswalk between taxonomies. */
  impliedTags?(context: ReadContext, vocabulary: Vocabulary): Promise<(tag: TagRecord) => readonly TagRecord[]>;
  organizations?(context: ReadContext, vocabulary: Vocabulary): AsyncIterable<OrganizationRecord>;
  tags?(context: ReadContext): AsyncIterable<TagLink>;
  identifiers?(context: ReadContext): AsyncIterable<IdentifierLink>;
  urls?(context: ReadContext): AsyncIterable<UrlLink>;
  /** Removes what reading it left behind (a harvest's copy of an API), once the import is over. */
  close?(): void;
}

export const SOURCE_KINDS = ['native', 'hsds', 'hsds-api', 'irs', 'ntee', 'open-eligibility', 'ntee-crosswalk'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
