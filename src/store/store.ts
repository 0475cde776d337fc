import type { FacetRequest, Facets } from './facets.ts';
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
  /** For a search that matched nothing: a spelling of it that matches something (see search-query.ts). */
  suggestion?: string;
  /** For a search: the categories whose organizations it lists after those its words name (see search-categories.ts). */
  categories?: CategoryLabel[];
  /** The facets asked for, of the whole filtered list (see facets.ts). */
  facets?: Facets;
}

/** A taxonomy term as a search names it among its categories. */
export interface CategoryLabel {
  id: string;
  code: string;
  name: string;
  taxonomy: string;
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

/** A version of the dataset, as the line of versions of a published dataset names it. */
export interface DatasetVersion {
  version: string;
  publishedAt: string;
  /** A hash of the taxonomies and terms alone: versions with the same one serve the same taxonomies and terms. */
  taxonomiesVersion: string;
}

/**
 * What changed from an earlier version of the line to this dataset: the organizations added or
 * changed since (their `last_modified` is later than its publish time), those removed, and whether
 * the taxonomies and terms differ. From no version at all, every organization is added.
 */
export interface Changes {
  /** The version the changes are counted from; undefined for everything. */
  since: DatasetVersion | undefined;
  /** This dataset's version. */
  version: DatasetVersion;
  taxonomiesChanged: boolean;
  changedCount: number;
  removedCount: number;
  /** The organizations added or changed, full documents, in list order. */
  changed: Batches;
  /** The organizations of `since` that are not served now (none from nothing), as `{ id, external_identifier, removed_at }`, in the order they were removed. */
  removed: Batches;
}

export interface TaxonomyTermRef {
  id: string;
  /** Null for a term of no taxonomy of the dataset. */
  taxonomyId: string | null;
}

/**
 * The text of a search (see http/query.ts; search-text.ts for what its words are). Taxonomies and
 * terms match items holding every word, those whose code or name holds them first, then list order,
 * ranked when no more than RANKED_SEARCH_LIMIT match. Organizations: see search-query.ts (what matches) and search-ranking.ts (in what order).
 */
export type SearchWords = readonly string[];

/**
 * Matches ranked per search: the whole list of taxonomies or terms up to this many; for organizations
 * the first this many in index order (fewest name words first), the rest following in that order.
 * Ranking costs time for every match ranked (about 4 µs each for organizations).
 */
export const RANKED_SEARCH_LIMIT = 1000;

/** Every criterion given must hold (AND). Ids are HSDS ids, already resolved from codes. */
export interface OrganizationFilter {
  search?: SearchWords;
  /** Organizations tagged with this term (exactly this term, as listed in `classifications`). */
  taxonomyTermId?: string;
  /** With taxonomyTermId: organizations tagged with the term or any term below it. */
  includeDescendants?: boolean;
  /** Organizations tagged with any term of this taxonomy. */
  taxonomyId?: string;
  /** Organizations with this tax status (compared by letters and digits, in any case: `501c3` is `501(c)(3)`). */
  taxStatus?: string;
  /** Organizations whose `last_modified` is at or after this instant (ISO 8601, UTC, milliseconds). */
  modifiedSince?: string;
}

export interface OrganizationView {
  /** Items carry `attributes` and `organization_identifiers`, as the single-organization document does. */
  full?: boolean;
}

export interface TaxonomyTermFilter {
  search?: SearchWords;
  taxonomyId?: string;
  /** Only the children of this term. */
  parentId?: string;
  /** Only terms without a parent (the roots of each taxonomy's tree). */
  topOnly?: boolean;
}

export interface TaxonomyFilter {
  search?: SearchWords;
}

/** A whole filtered list, in order, in batches of rendered items: for streaming without pages. */
export type Batches = AsyncIterable<string[]>;

export interface Store {
  info(): Promise<DatasetInfo>;
  organizations(filter: OrganizationFilter, range: PositionRange, view?: OrganizationView): Promise<Page>;
  allOrganizations(filter: OrganizationFilter, view?: OrganizationView): Batches;
  /** How the organizations of the filtered list spread over each facet asked for (see facets.ts). */
  organizationFacets(filter: OrganizationFilter, requests: readonly FacetRequest[]): Promise<Facets>;
  /** The full organization document by HSDS id. */
  organization(id: string): Promise<string | undefined>;
  /** The HSDS id of the published organization with this native id (`external_identifier`). */
  organizationIdByNativeId(nativeId: string): Promise<string | undefined>;
  taxonomies(filter: TaxonomyFilter, range: PositionRange): Promise<Page>;
  allTaxonomies(filter: TaxonomyFilter): Batches;
  taxonomy(id: string): Promise<string | undefined>;
  taxonomyTerms(filter: TaxonomyTermFilter, range: PositionRange): Promise<Page>;
  allTaxonomyTerms(filter: TaxonomyTermFilter): Batches;
  /** The term with its `taxonomy_detail`. */
  taxonomyTerm(id: string): Promise<string | undefined>;
  /** Resolves a taxonomy by id or by code, case-insensitively. */
  findTaxonomy(idOrCode: string): Promise<TaxonomyRef | undefined>;
  /**
   * Resolves a term by id, or by `taxonomy:code` (the taxonomy code in any case; the term code
   * exactly, else in any case).
   */
  findTaxonomyTerm(idOrCode: string): Promise<TaxonomyTermRef | undefined>;
  /** Every taxonomy code, in list order. */
  taxonomyCodes(): Promise<string[]>;
  /** This dataset's line of versions: those it was published after, oldest first (at most KEPT_VERSIONS - 1 of them), then itself. */
  versions(): Promise<DatasetVersion[]>;
  /** The changes since a version of the line (undefined: since nothing); undefined when `since` is not one. */
  changes(since: string | undefined): Promise<Changes | undefined>;
  close(): Promise<void>;
}

/** The store cannot answer now (its database is unreachable, overloaded or restarting); try again shortly. */
export class StoreUnavailable extends Error {}

/** Whether a provider can answer requests: a dataset is loaded and its store reachable. */
export interface Readiness {
  ready: boolean;
  /** The dataset version served, when ready. */
  version?: string;
  /** Why not, when not ready. */
  reason?: string;
  /** Not ready because the dataset served was found damaged after it was opened (a read found altered bytes). */
  damaged?: boolean;
  /** Ready, but something an operator should know (a newer snapshot refused, say). */
  warning?: string;
}

/** A store held for the length of one request: every answer to that request comes from it. */
export interface StoreLease {
  readonly store: Store;
  release(): void;
}

/** Where a live store provider reports a switch to a new dataset, and a problem. */
export interface LiveStoreLog {
  info(message: string): void;
  error(message: string): void;
}

/**
 * Where the server gets its store. A provider may switch to a newly published dataset at any time;
 * a lease keeps the store it was given open until released, so no response mixes versions.
 */
export interface StoreProvider {
  acquire(): StoreLease;
  readiness(): Promise<Readiness>;
  close(): Promise<void>;
}

/** A provider that always gives the same store (tests; backends that switch versions themselves). */
export function fixedStore(store: Store): StoreProvider {
  return {
    acquire: () => ({ store, release: () => {} }),
    readiness: async () => ({ ready: true, version: (await store.info()).version }),
    close: () => store.close(),
  };
}
