import { findTaxonomyRow, findTermRow, membershipsOf, searchesNothing, simplifiedFilter } from './filter-plan.ts';
import { labelled, TAX_STATUS_FACET, termFacet } from './facets.ts';
import type { FacetCount, FacetLabels, FacetRequest, Facets } from './facets.ts';
import type { Membership, ModifiedRange, TaxonomyRow, TermLookups } from './filter-plan.ts';
import type { Listing } from './listing.ts';
import { OrganizationSearch } from './organization-search.ts';
import type { SearchCategories } from './search-categories.ts';
import type { SearchQuery } from './search-query.ts';
import type { Candidate } from './search-ranking.ts';
import type { Vocabulary } from './search-vocabulary.ts';
import { RANKED_SEARCH_LIMIT } from './store.ts';
import type {
  Batches,
  Changes,
  DatasetInfo,
  DatasetVersion,
  OrganizationFilter,
  OrganizationView,
  Page,
  PositionRange,
  SearchWords,
  Store,
  TaxonomyFilter,
  TaxonomyRef,
  TaxonomyTermFilter,
  TaxonomyTermRef,
} from './store.ts';

/** Conditions on the terms table (aliased `t`) of a term filter, other than search. */
export interface TermConditions<Param> {
  where: string[];
  params: Param[];
}

/** Items looked up one at a time, by id (or native id). */
export type ItemKind = 'organization' | 'organizationIdByNativeId' | 'taxonomy' | 'taxonomyTerm';

/** Whether an item is a served document, read with its check (see ListingSql.items): all but the native id lookup. */
export const isDocument = (kind: ItemKind): boolean => kind !== 'organizationIdByNativeId';

/**
 * What one backend supplies: how it runs the SQL that listing-sql.ts builds for it, and its text
 * search. Everything else about answering the Store's questions is in ListingStore, once, so the
 * backends cannot answer differently.
 */
export interface ListingBackend<Param> {
  /** Read once, when the dataset is opened. */
  readonly info: DatasetInfo;
  readonly taxonomies: TaxonomyRow[];
  readonly modifiedRange: ModifiedRange;
  /** The line of versions, oldest first, this dataset last. */
  readonly history: readonly DatasetVersion[];
  readonly terms: TermLookups;
  /** The words of organization names, which searches are corrected and completed to. */
  readonly vocabulary: Vocabulary;
  /** How many organizations are classified under a term (by position): what ranking weighs a search's category by. */
  termSize(term: number): number;
  count(listing: Listing<Param>): Promise<number>;
  /** The items at 0-based `offset`, in order (by relevance first when `ranked`). */
  items(listing: Listing<Param>, offset: number, limit: number, ranked: boolean): Promise<string[]>;
  /** Every item, in order (by relevance first when `ranked`), a batch at a time. */
  all(listing: Listing<Param>, ranked: boolean): Batches;
  /**
   * The first `limit` matches of an organization search (a listing with `candidates`) in list order,
   * with what they are ranked by; `matches` is how many there are in all.
   */
  candidates(listing: Listing<Param>, limit: number, matches: number): Promise<Candidate[]>;
  /** The JSON of these positions of the listing's JSON table, in the order given. */
  jsonOf(listing: Listing<Param>, positions: readonly number[]): Promise<string[]>;
  /** A page of every organization, or of one membership list: a range of positions, its total known. */
  organizationsByPosition(membership: Membership | undefined, view: OrganizationView, range: PositionRange): Promise<Page>;
  /** Organizations by search (`query`, made from filter.search) and/or `modifiedSince`, within every membership list given. */
  organizationListing(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView, query?: SearchQuery): Listing<Param>;
  /** Keys of the organizations under a search's category terms: see ListingSql.categoryMembers. */
  categoryMembers(filter: OrganizationFilter, memberships: readonly Membership[], categories: SearchCategories): Promise<number[]>;
  /** Organizations at these positions, in this order (read through jsonOf and facetCounts only). */
  positionsListing(view: OrganizationView, positions: readonly number[]): Listing<Param>;
  /** What facet values are called. */
  readonly facetLabels: FacetLabels;
  /** Organizations per value of each facet (facets.ts) in a listing, or in the unfiltered list. */
  facetCounts(listing: Listing<Param> | undefined, facets: readonly number[]): Promise<FacetCount[]>;
  taxonomyListing(search: SearchWords | undefined): Listing<Param>;
  /** The organizations the version published at this instant held that are not served now (`removed_organizations`, its `json`), in the order they were removed. */
  removedListing(since: string): Listing<Param>;
  termListing(conditions: TermConditions<Param>, search: SearchWords | undefined): Listing<Param>;
  item(kind: ItemKind, key: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const EMPTY: Page = { total: 0, items: [] };

/** A Store over one published dataset of any backend (see ListingBackend). */
export class ListingStore<Param> implements Store {
  private readonly backend: ListingBackend<Param>;
  private readonly search: OrganizationSearch<Param>;

  constructor(backend: ListingBackend<Param>) {
    this.backend = backend;
    this.search = new OrganizationSearch(backend);
  }

  private async page(listing: Listing<Param> | undefined, range: PositionRange): Promise<Page> {
    if (listing === undefined) return EMPTY;
    const total = await this.backend.count(listing);
    return { total, items: range.first > total ? [] : await this.backend.items(listing, range.first - 1, range.count, total <= RANKED_SEARCH_LIMIT) };
  }

  private async *all(listing: Listing<Param> | undefined): Batches {
    if (listing === undefined) return;
    yield* this.backend.all(listing, listing.ranking !== undefined && (await this.backend.count(listing)) <= RANKED_SEARCH_LIMIT);
  }

  async info(): Promise<DatasetInfo> {
    return this.backend.info;
  }

  /**
   * Unfiltered and term- or taxonomy-filtered lists are ranges of precomputed positions. Search and
   * `modifiedSince` are answered by the text index and the `modified_at` index, then ordered.
   */
  async organizations(filter: OrganizationFilter, range: PositionRange, view: OrganizationView = {}): Promise<Page> {
    const simple = simplifiedFilter(filter, this.backend.modifiedRange);
    if (simple === undefined) return EMPTY;
    const memberships = await this.membershipsOf(simple);
    if (memberships === 'none') return EMPTY;
    if (simple.search === undefined && simple.modifiedSince === undefined && memberships.length <= 1) {
      return this.backend.organizationsByPosition(memberships[0], view, range);
    }
    if (simple.search === undefined) return this.page(this.backend.organizationListing(simple, memberships, view), range);
    return this.search.page(simple, memberships, view, range);
  }

  async *allOrganizations(filter: OrganizationFilter, view: OrganizationView = {}): Batches {
    const simple = simplifiedFilter(filter, this.backend.modifiedRange);
    if (simple === undefined) return;
    const memberships = await this.membershipsOf(simple);
    if (memberships === 'none') return;
    if (simple.search === undefined) {
      yield* this.backend.all(this.backend.organizationListing(simple, memberships, view), false);
      return;
    }
    yield* this.search.all(simple, memberships, view);
  }

  private membershipsOf(filter: OrganizationFilter) {
    return membershipsOf(filter, this.backend.taxonomies, this.backend.terms.byId, this.backend.facetLabels);
  }

  /**
   * Counts of the filtered list's organizations per value of each facet asked for. A facet of an
   * unknown taxonomy is left out; the unfiltered list's counts were made at publish.
   */
  async organizationFacets(filter: OrganizationFilter, requests: readonly FacetRequest[]): Promise<Facets> {
    const simple = simplifiedFilter(filter, this.backend.modifiedRange);
    const memberships = simple === undefined ? 'none' : await this.membershipsOf(simple);
    const asked: { name: string; facet: number; request: FacetRequest }[] = [];
    for (const request of requests) {
      if (request.kind === 'tax_status') {
        asked.push({ name: 'tax_status', facet: TAX_STATUS_FACET, request });
        continue;
      }
      const taxonomy = findTaxonomyRow(this.backend.taxonomies, request.taxonomy);
      if (taxonomy !== undefined) asked.push({ name: `${taxonomy.code}:${request.depth}`, facet: termFacet(taxonomy.position, request.depth), request });
    }
    let counts: FacetCount[] = [];
    if (simple !== undefined && memberships !== 'none' && asked.length > 0) {
      const facetsAsked = [...new Set(asked.map((entry) => entry.facet))];
      const unfiltered = simple.search === undefined && simple.modifiedSince === undefined && memberships.length === 0;
      if (unfiltered) counts = await this.backend.facetCounts(undefined, facetsAsked);
      else if (simple.search === undefined) counts = await this.backend.facetCounts(this.backend.organizationListing(simple, memberships, {}), facetsAsked);
      else counts = await this.search.facetCounts(simple, memberships, facetsAsked);
    }
    const facets: Facets = {};
    for (const { name, facet, request } of asked) facets[name] = labelled(this.backend.facetLabels, request, counts.filter((count) => count.facet === facet));
    return facets;
  }

  organization(id: string): Promise<string | undefined> {
    return this.backend.item('organization', id);
  }

  organizationIdByNativeId(nativeId: string): Promise<string | undefined> {
    return this.backend.item('organizationIdByNativeId', nativeId);
  }

  taxonomies(filter: TaxonomyFilter, range: PositionRange): Promise<Page> {
    return this.page(searchesNothing(filter.search) ? undefined : this.backend.taxonomyListing(filter.search), range);
  }

  allTaxonomies(filter: TaxonomyFilter): Batches {
    return this.all(searchesNothing(filter.search) ? undefined : this.backend.taxonomyListing(filter.search));
  }

  taxonomy(id: string): Promise<string | undefined> {
    return this.backend.item('taxonomy', id);
  }

  /** Term lists are small (a taxonomy's size), so every filter is answered by one indexed query. */
  private async termListing(filter: TaxonomyTermFilter): Promise<Listing<Param> | undefined> {
    const conditions: TermConditions<Param> = { where: [], params: [] };
    const add = (condition: string, param?: number) => {
      conditions.where.push(condition);
      if (param !== undefined) conditions.params.push(param as Param);
    };
    if (filter.taxonomyId !== undefined) {
      const taxonomy = this.backend.taxonomies.find((row) => row.id === filter.taxonomyId);
      if (taxonomy === undefined) return undefined;
      add('t.taxonomy_position = ?', taxonomy.position);
    }
    if (filter.parentId !== undefined) {
      const parent = await this.backend.terms.byId(filter.parentId);
      if (parent === undefined) return undefined;
      add('t.parent_position = ?', parent.position);
    }
    if (filter.topOnly === true) add('t.parent_position IS NULL');
    return searchesNothing(filter.search) ? undefined : this.backend.termListing(conditions, filter.search);
  }

  async taxonomyTerms(filter: TaxonomyTermFilter, range: PositionRange): Promise<Page> {
    return this.page(await this.termListing(filter), range);
  }

  async *allTaxonomyTerms(filter: TaxonomyTermFilter): Batches {
    yield* this.all(await this.termListing(filter));
  }

  /** The term with its `taxonomy_detail`. */
  taxonomyTerm(id: string): Promise<string | undefined> {
    return this.backend.item('taxonomyTerm', id);
  }

  async findTaxonomy(idOrCode: string): Promise<TaxonomyRef | undefined> {
    const row = findTaxonomyRow(this.backend.taxonomies, idOrCode);
    return row === undefined ? undefined : { id: row.id, code: row.code };
  }

  findTaxonomyTerm(idOrCode: string): Promise<TaxonomyTermRef | undefined> {
    return findTermRow(idOrCode, this.backend.taxonomies, this.backend.terms);
  }

  async taxonomyCodes(): Promise<string[]> {
    return this.backend.taxonomies.map((row) => row.code);
  }

  async versions(): Promise<DatasetVersion[]> {
    return [...this.backend.history];
  }

  /**
   * Publish times are unique and increase along a line (see build/history.ts), and an organization's
   * `last_modified` is the publish time of the version that first served it as it is: those modified
   * after `since` was published are the ones added or changed since. Milliseconds are the unit of both,
   * so "after" is "at or after one millisecond later".
   */
  async changes(since: string | undefined): Promise<Changes | undefined> {
    const history = this.backend.history;
    const current = history.at(-1)!;
    const from = since === undefined ? undefined : history.find((version) => version.version === since);
    if (since !== undefined && from === undefined) return undefined;
    const filter: OrganizationFilter = from === undefined ? {} : { modifiedSince: new Date(Date.parse(from.publishedAt) + 1).toISOString() };
    const removed = from === undefined ? undefined : this.backend.removedListing(from.publishedAt);
    const [changedCount, removedCount] = await Promise.all([
      this.organizations(filter, { first: 1, count: 0 }).then((page) => page.total),
      removed === undefined ? 0 : this.backend.count(removed),
    ]);
    return {
      since: from,
      version: current,
      taxonomiesChanged: from?.taxonomiesVersion !== current.taxonomiesVersion,
      changedCount,
      removedCount,
      changed: this.allOrganizations(filter, { full: true }),
      removed: this.all(removed),
    };
  }

  close(): Promise<void> {
    return this.backend.close();
  }
}
