import { findTaxonomyRow, findTermRow, isSearchAlone, membershipsOf, searchesNothing, simplifiedFilter } from './filter-plan.ts';
import { labelled, TAX_STATUS_FACET, termFacet } from './facets.ts';
import type { FacetCount, FacetLabels, FacetRequest, Facets } from './facets.ts';
import type { Membership, ModifiedRange, TaxonomyRow, TermLookups } from './filter-plan.ts';
import type { Listing } from './listing.ts';
import { organizationQuery, PARTIAL_MATCHES_BELOW, partialMatches, rankCandidates, suggestedSearches } from './search-query.ts';
import type { Candidate, SearchQuery } from './search-query.ts';
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

/**
 * What one backend supplies: its SQL and how to run it. Everything else about answering the Store's
 * questions is in ListingStore, once, so the backends cannot answer differently.
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
  /** What facet values are called. */
  readonly facetLabels: FacetLabels;
  /** Organizations per value of each facet (facets.ts) in a listing, or in the unfiltered list. */
  facetCounts(listing: Listing<Param> | undefined, facets: readonly number[]): Promise<FacetCount[]>;
  taxonomyListing(search: SearchWords | undefined): Listing<Param>;
  /** The organizations removed after this instant (`removed_organizations`, its `json`), in the order they were removed. */
  removedListing(after: string): Listing<Param>;
  termListing(conditions: TermConditions<Param>, search: SearchWords | undefined): Listing<Param>;
  item(kind: ItemKind, key: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const EMPTY: Page = { total: 0, items: [] };

/** Facet counts of lists that share no organization, added up per facet value. */
function sumCounts(lists: readonly FacetCount[][]): FacetCount[] {
  if (lists.length === 1) return lists[0]!;
  const sums = new Map<string, FacetCount>();
  for (const count of lists.flat()) {
    const key = `${count.facet}:${count.value}`;
    const sum = sums.get(key);
    if (sum === undefined) sums.set(key, { ...count });
    else sum.count = Number(sum.count) + Number(count.count);
  }
  return [...sums.values()];
}

/** One part of what an organization search matches: its full matches, or its partial matches. */
interface SearchPart<Param> {
  listing: Listing<Param>;
  total: number;
  /** The first RANKED_SEARCH_LIMIT matches, ranked. */
  window(): Promise<Candidate[]>;
}

/** What an organization search matches (see ListingStore.searchMatches): parts served one after another, none sharing an organization. */
interface SearchMatches<Param> {
  parts: SearchPart<Param>[];
  total: number;
}

/** Which query answers a search, how many it matches, and its partial matches (see partialMatches), if it has any served. */
interface SearchDecision {
  query: SearchQuery;
  total: number;
  partial?: { query: SearchQuery; total: number };
}

/** Searches whose words are kept made (see ListingStore.query); the oldest goes first. */
const QUERIES_KEPT = 256;

/** Items per batch when a ranked search is streamed. */
const BATCH = 256;

/** A Store over one published dataset of any backend (see ListingBackend). */
export class ListingStore<Param> implements Store {
  private readonly backend: ListingBackend<Param>;
  private readonly queries = new Map<string, SearchQuery>();
  /** Search decisions under way (see searchDecision), by filter and membership lists. */
  private readonly decisions = new Map<string, Promise<SearchDecision>>();

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
    const memberships = await this.membershipsOf(simple);
    if (memberships === 'none') return EMPTY;
    if (simple.search === undefined && simple.modifiedSince === undefined && memberships.length <= 1) {
      return this.backend.organizationsByPosition(memberships[0], view, range);
    }
    if (simple.search === undefined) return this.page(this.backend.organizationListing(simple, memberships, view), range);
    return this.searchPage(await this.searchMatches(simple, memberships, view, range.first <= RANKED_SEARCH_LIMIT), simple, range);
  }

  /**
   * A search's parts and total: its full matches as typed, or when that matches nothing and
   * correcting its short words too matches something, that (see organizationQuery); then its partial
   * matches, when the full matches are few.
   */
  private async searchMatches(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView, ranked = false): Promise<SearchMatches<Param>> {
    const typed = this.query(filter)!;
    const typedListing = this.backend.organizationListing(filter, memberships, view, typed);
    // Searched alone, the vocabulary tells closely enough how many match to choose how the matches
    // are read: the ranked window is read while they are counted.
    const early = ranked && isSearchAlone(filter, memberships) ? this.rankedWindow(typedListing, typed, typed.estimatedMatches) : undefined;
    early?.catch(() => {});
    const { query, total, partial } = await this.searchDecision(filter, memberships);
    const full = this.searchPart(filter, memberships, view, { query, total }, query === typed ? { listing: typedListing, window: early } : undefined);
    const parts = partial === undefined ? [full] : [full, this.searchPart(filter, memberships, view, partial)];
    return { parts, total: parts.reduce((sum, part) => sum + part.total, 0) };
  }

  /** A part of a search's matches; `made`: its listing already made, and its window if already being read. */
  private searchPart(
    filter: OrganizationFilter,
    memberships: readonly Membership[],
    view: OrganizationView,
    { query, total }: { query: SearchQuery; total: number },
    made?: { listing: Listing<Param>; window?: Promise<Candidate[]> },
  ): SearchPart<Param> {
    const listing = made?.listing ?? this.backend.organizationListing(filter, memberships, view, query);
    if (total === 0) return { listing, total, window: async () => [] };
    return { listing, total, window: () => made?.window ?? this.rankedWindow(listing, query, total) };
  }

  /**
   * Which query answers a search (as typed, or with its short words corrected) and how many it
   * matches. A page and its facets ask at once: they share one decision, made once.
   */
  private searchDecision(filter: OrganizationFilter, memberships: readonly Membership[]): Promise<SearchDecision> {
    const key = JSON.stringify([filter, memberships]);
    let decision = this.decisions.get(key);
    if (decision === undefined) {
      decision = this.decide(filter, memberships).finally(() => this.decisions.delete(key));
      this.decisions.set(key, decision);
    }
    return decision;
  }

  private async decide(filter: OrganizationFilter, memberships: readonly Membership[]): Promise<SearchDecision> {
    const { query, total } = await this.fullMatches(filter, memberships);
    const partial = total < PARTIAL_MATCHES_BELOW ? partialMatches(query) : undefined;
    if (partial === undefined) return { query, total };
    const partialTotal = await this.backend.count(this.backend.organizationListing(filter, memberships, {}, partial));
    return partialTotal === 0 ? { query, total } : { query, total, partial: { query: partial, total: partialTotal } };
  }

  /** The query of a search's full matches, and how many there are. */
  private async fullMatches(filter: OrganizationFilter, memberships: readonly Membership[]): Promise<{ query: SearchQuery; total: number }> {
    const typed = this.query(filter)!;
    const total = await this.backend.count(this.backend.organizationListing(filter, memberships, {}, typed));
    if (total > 0) return { query: typed, total };
    const lenient = this.query(filter, true)!;
    if (lenient.words.every((word, index) => word.alternatives.size === typed.words[index]!.alternatives.size)) return { query: typed, total };
    const lenientTotal = await this.backend.count(this.backend.organizationListing(filter, memberships, {}, lenient));
    return lenientTotal > 0 ? { query: lenient, total: lenientTotal } : { query: typed, total };
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
    for (const { listing, window: ranked } of (await this.searchMatches(simple, memberships, view, true)).parts) {
      const window = await ranked();
      for (let start = 0; start < window.length; start += BATCH) yield await this.backend.jsonOf(listing, window.slice(start, start + BATCH).map((candidate) => candidate.position));
      if (window.length === RANKED_SEARCH_LIMIT) {
        const lastRank = Math.max(...window.map((candidate) => candidate.rank));
        yield* this.backend.all({ ...listing, where: [...listing.where, `${listing.order} > ?`], params: [...listing.params, lastRank as Param] }, false);
      }
    }
  }

  /** The first RANKED_SEARCH_LIMIT matches of a search in list order (fewest name words first), ranked. */
  private async rankedWindow(listing: Listing<Param>, query: SearchQuery, matches: number): Promise<Candidate[]> {
    return rankCandidates(await this.backend.candidates(listing, RANKED_SEARCH_LIMIT, matches), query, (term) => this.backend.termSize(term));
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
      else {
        // The parts of a search share no organization: their counts add up.
        const parts = (await this.searchMatches(simple, memberships, {})).parts.filter((part) => part.total > 0);
        counts = sumCounts(await Promise.all(parts.map((part) => this.backend.facetCounts(part.listing, facetsAsked))));
      }
    }
    const facets: Facets = {};
    for (const { name, facet, request } of asked) facets[name] = labelled(this.backend.facetLabels, request, counts.filter((count) => count.facet === facet));
    return facets;
  }

  /**
   * The search's words and alternatives, kept per text: a page with facets asks for both from one
   * request, and correcting a long word reads the vocabulary for milliseconds.
   */
  private query(filter: OrganizationFilter, shortWords = false): SearchQuery | undefined {
    if (filter.search === undefined) return undefined;
    const key = `${shortWords ? 'short words ' : ''}\t${filter.search.join(' ')}`;
    let query = this.queries.get(key);
    if (query === undefined) {
      if (this.queries.size >= QUERIES_KEPT) this.queries.delete(this.queries.keys().next().value!);
      query = organizationQuery(filter.search, this.backend.vocabulary, shortWords);
      this.queries.set(key, query);
    }
    return query;
  }

  /**
   * A page of an organization search: its parts one after another (searchMatches). When no
   * organization holds every word, the page may carry the closest spelling that does.
   */
  private async searchPage({ parts, total }: SearchMatches<Param>, filter: OrganizationFilter, range: PositionRange): Promise<Page> {
    const suggestion = parts[0]!.total === 0 ? await this.suggestion(filter) : undefined;
    const suggested = suggestion === undefined ? {} : { suggestion };
    if (range.first > total) return { total, items: [], ...suggested };
    const start = range.first - 1;
    const end = start + range.count;
    const reads: Promise<string[]>[] = [];
    let before = 0;
    for (const part of parts) {
      if (before >= end) break;
      const partStart = Math.max(start - before, 0);
      const partEnd = Math.min(end - before, part.total);
      // The parts a page spans are read at once.
      if (partStart < partEnd) reads.push(this.partItems(part, partStart, partEnd));
      before += part.total;
    }
    return { total, items: (await Promise.all(reads)).flat(), ...suggested };
  }

  /**
   * Items `start` to `end` (0-based, end excluded) of a part of a search: its first RANKED_SEARCH_LIMIT
   * matches in list order (fewest name words first) ranked (search-query.ts), the rest after them in
   * list order.
   */
  private async partItems({ listing, total, window }: SearchPart<Param>, start: number, end: number): Promise<string[]> {
    const windowLength = Math.min(total, RANKED_SEARCH_LIMIT);
    const items = start < windowLength ? await this.backend.jsonOf(listing, (await window()).slice(start, end).map((candidate) => candidate.position)) : [];
    if (end > windowLength) {
      const after = Math.max(start, windowLength);
      items.push(...(await this.backend.items(listing, after, end - after, false)));
    }
    return items;
  }

  /** Of the other spellings of a search, the one with the most matches under the same filter, if any has one. */
  private async suggestion(filter: OrganizationFilter): Promise<string | undefined> {
    const memberships = await this.membershipsOf(filter);
    if (memberships === 'none') return undefined;
    let best: { spelling: string; total: number } | undefined;
    for (const spelling of suggestedSearches(filter.search!, this.backend.vocabulary)) {
      const retry = { ...filter, search: [spelling] };
      const total = await this.backend.count(this.backend.organizationListing(retry, memberships, {}, this.query(retry)));
      if (total > (best?.total ?? 0)) best = { spelling, total };
    }
    return best?.spelling;
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
   * Publish times are unique and increase along a line (see publish/history.ts), and an organization's
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
