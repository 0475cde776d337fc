import { findTaxonomyRow, findTermRow, membershipOf, simplifiedFilter } from './filter-plan.ts';
import type { Membership, ModifiedRange, TaxonomyRow, TermLookups } from './filter-plan.ts';
import type { Listing } from './listing.ts';
import { RANKED_SEARCH_LIMIT } from './store.ts';
import type {
  Batches,
  DatasetInfo,
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

/**
 * What one backend supplies: its SQL and how to run it. Everything else about answering the Store's
 * questions is in ListingStore, once, so the backends cannot answer differently.
 */
export interface ListingBackend<Param> {
  /** Read once, when the dataset is opened. */
  readonly info: DatasetInfo;
  readonly taxonomies: TaxonomyRow[];
  readonly modifiedRange: ModifiedRange;
  readonly terms: TermLookups;
  count(listing: Listing<Param>): Promise<number>;
  /** The items at 0-based `offset`, in order (by relevance first when `ranked`). */
  items(listing: Listing<Param>, offset: number, limit: number, ranked: boolean): Promise<string[]>;
  /** Every item, in order (by relevance first when `ranked`), a batch at a time. */
  all(listing: Listing<Param>, ranked: boolean): Batches;
  /** A page of every organization, or of one membership list: a range of positions, its total known. */
  organizationsByPosition(membership: Membership | undefined, view: OrganizationView, range: PositionRange): Promise<Page>;
  /** Organizations by search and/or `modifiedSince`, within a membership list if one is given. */
  organizationListing(filter: OrganizationFilter, membership: Membership | undefined, view: OrganizationView): Listing<Param>;
  taxonomyListing(search: SearchWords | undefined): Listing<Param>;
  termListing(conditions: TermConditions<Param>, search: SearchWords | undefined): Listing<Param>;
  item(kind: ItemKind, key: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const EMPTY: Page = { total: 0, items: [] };

/** A Store over one published dataset of any backend (see ListingBackend). */
export class ListingStore<Param> implements Store {
  private readonly backend: ListingBackend<Param>;

  constructor(backend: ListingBackend<Param>) {
    this.backend = backend;
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
    const membership = await membershipOf(simple, this.backend.taxonomies, this.backend.terms.byId);
    if (membership === 'none') return EMPTY;
    if (simple.search === undefined && simple.modifiedSince === undefined) return this.backend.organizationsByPosition(membership, view, range);
    return this.page(this.backend.organizationListing(simple, membership, view), range);
  }

  async *allOrganizations(filter: OrganizationFilter, view: OrganizationView = {}): Batches {
    const simple = simplifiedFilter(filter, this.backend.modifiedRange);
    if (simple === undefined) return;
    const membership = await membershipOf(simple, this.backend.taxonomies, this.backend.terms.byId);
    if (membership !== 'none') yield* this.all(this.backend.organizationListing(simple, membership, view));
  }

  organization(id: string): Promise<string | undefined> {
    return this.backend.item('organization', id);
  }

  organizationIdByNativeId(nativeId: string): Promise<string | undefined> {
    return this.backend.item('organizationIdByNativeId', nativeId);
  }

  taxonomies(filter: TaxonomyFilter, range: PositionRange): Promise<Page> {
    return this.page(this.backend.taxonomyListing(filter.search), range);
  }

  allTaxonomies(filter: TaxonomyFilter): Batches {
    return this.all(this.backend.taxonomyListing(filter.search));
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
    return this.backend.termListing(conditions, filter.search);
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

  close(): Promise<void> {
    return this.backend.close();
  }
}
