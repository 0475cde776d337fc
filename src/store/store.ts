/**
 * The questions the HTTP layer asks of a published dataset, answered with ready JSON strings.
 * A backend is one class implementing this; it never builds JSON itself (rendering happens at publish).
 */

/** A run of items by 1-based position in the documented sort order. */
export interface PositionRange {
  first: number;
  count: number;
}

export interface Page {
  /** Items in the whole (filtered) list, not only on this page. */
  total: number;
  /** Rendered JSON objects, in order. */
  items: string[];
}

export interface TaxonomyRef {
  id: string;
  code: string;
}

export interface DatasetInfo {
  /** Content hash of everything served. */
  version: string;
  publishedAt: string;
  organizations: number;
  taxonomies: number;
  taxonomyTerms: number;
}

export interface TaxonomyTermFilter {
  taxonomyId?: string;
}

export interface Store {
  info(): Promise<DatasetInfo>;
  organizations(range: PositionRange): Promise<Page>;
  /** The full organization document by HSDS id. */
  organization(id: string): Promise<string | undefined>;
  /** The HSDS id of the published organization with this native id (`external_identifier`). */
  organizationIdByNativeId(nativeId: string): Promise<string | undefined>;
  taxonomies(range: PositionRange): Promise<Page>;
  taxonomy(id: string): Promise<string | undefined>;
  taxonomyTerms(filter: TaxonomyTermFilter, range: PositionRange): Promise<Page>;
  /** The term with its `taxonomy_detail`. */
  taxonomyTerm(id: string): Promise<string | undefined>;
  /** Resolves a taxonomy by id or by code, case-insensitively. */
  findTaxonomy(idOrCode: string): Promise<TaxonomyRef | undefined>;
  /** Every taxonomy code, in list order. */
  taxonomyCodes(): Promise<string[]>;
  close(): Promise<void>;
}

/** A store held for the length of one request: every answer to that request comes from it. */
export interface StoreLease {
  readonly store: Store;
  release(): void;
}

/**
 * Where the server gets its store. A provider may switch to a newly published dataset at any time;
 * a lease keeps the store it was given open until released, so no response mixes versions.
 */
export interface StoreProvider {
  acquire(): StoreLease;
  close(): Promise<void>;
}

/** A provider that always gives the same store (tests; backends that switch versions themselves). */
export function fixedStore(store: Store): StoreProvider {
  return {
    acquire: () => ({ store, release: () => {} }),
    close: () => store.close(),
  };
}
