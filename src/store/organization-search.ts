import { isSearchAlone } from './filter-plan.ts';
import type { FacetCount } from './facets.ts';
import type { Membership } from './filter-plan.ts';
import type { Listing } from './listing.ts';
import type { ListingBackend } from './listing-store.ts';
import { KeptValues } from './kept-values.ts';
import { CategoryMatcher, listedMembers, orderCategoryMatches } from './search-categories.ts';
import type { SearchCategories } from './search-categories.ts';
import { organizationQuery, PARTIAL_MATCHES_BELOW, partialMatches, readAlike, Reading, suggestedSearches } from './search-query.ts';
import type { SearchQuery } from './search-query.ts';
import { rankCandidates } from './search-ranking.ts';
import type { Candidate } from './search-ranking.ts';
import { RANKED_SEARCH_LIMIT } from './store.ts';
import type { Batches, CategoryLabel, OrganizationFilter, OrganizationView, Page, PositionRange } from './store.ts';

/** One part of what an organization search matches: its full matches, its category matches, or its partial matches. */
interface SearchPart<Param> {
  listing: Listing<Param>;
  total: number;
  /** The first RANKED_SEARCH_LIMIT matches, ranked. */
  window(): Promise<Candidate[]>;
  /** Whether matches beyond the window follow in list order (for a part of more than RANKED_SEARCH_LIMIT). */
  more: boolean;
}

/** What an organization search matches: parts served one after another, none sharing an organization. */
interface SearchMatches<Param> {
  parts: SearchPart<Param>[];
  total: number;
  /** The categories of its category matches, when it has any. */
  categories?: SearchCategories;
}

/**
 * Which query answers a search, how many it matches, its category matches (the organizations in the
 * categories its words name, less its full matches, in order: see orderCategoryMatches) or its
 * partial matches (see partialMatches), for each that it has.
 */
interface SearchDecision {
  query: SearchQuery;
  total: number;
  /** Its full matches in list order, when its words name categories: they are ranked with them, and left out of its category matches. */
  fullMatches?: Candidate[];
  /** The organizations in the categories its words name (see listedMembers), which rank ahead of others among its full matches. */
  inCategories?: ReadonlySet<number>;
  categories?: { named: SearchCategories; positions: number[] };
  partial?: { query: SearchQuery; total: number };
}

/** Searches whose words are kept made (see OrganizationSearch.query); the oldest goes first. */
const QUERIES_KEPT = 256;

/** Items per batch when a ranked search is streamed. */
const BATCH = 256;

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

/**
 * Organization searches over one backend: which query answers a search (search-query.ts), its full
 * and partial matches, their pages, streams and facet counts. `filter` always has a search, and
 * `memberships` are its other filters' lists.
 */
export class OrganizationSearch<Param> {
  private readonly backend: ListingBackend<Param>;
  private categoryMatcher: CategoryMatcher | undefined;
  private readonly namedKept = new KeptValues<SearchCategories | undefined>(QUERIES_KEPT);
  private readonly queries = new KeptValues<SearchQuery>(QUERIES_KEPT);
  /** Search decisions under way (see decision), by filter and membership lists. */
  private readonly decisions = new Map<string, Promise<SearchDecision>>();

  constructor(backend: ListingBackend<Param>) {
    this.backend = backend;
    // Made now, not by the first search, which would wait for it (tens of milliseconds).
    this.categories();
  }

  /**
   * A page of a search: its parts one after another (see matches). When no organization holds every
   * word, the page may carry the closest spelling that does.
   */
  async page(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView, range: PositionRange): Promise<Page> {
    const { parts, total, categories } = await this.matches(filter, memberships, view, range.first <= RANKED_SEARCH_LIMIT);
    const suggestion = parts[0]!.total === 0 ? await this.suggestion(filter, memberships) : undefined;
    const suggested = {
      ...(suggestion === undefined ? {} : { suggestion }),
      ...(categories === undefined ? {} : { categories: this.labels(categories) }),
    };
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

  /** Every match of a search, in the order of its pages, a batch at a time. */
  async *all(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView): Batches {
    for (const { listing, window: ranked, more } of (await this.matches(filter, memberships, view, true)).parts) {
      const window = await ranked();
      for (let start = 0; start < window.length; start += BATCH) yield await this.backend.jsonOf(listing, window.slice(start, start + BATCH).map((candidate) => candidate.position));
      if (more && window.length === RANKED_SEARCH_LIMIT) {
        const lastRank = Math.max(...window.map((candidate) => candidate.rank));
        yield* this.backend.all({ ...listing, where: [...listing.where, `${listing.order} > ?`], params: [...listing.params, lastRank as Param] }, false);
      }
    }
  }

  /** Organizations per value of each facet among a search's matches. */
  async facetCounts(filter: OrganizationFilter, memberships: readonly Membership[], facets: readonly number[]): Promise<FacetCount[]> {
    // The parts of a search share no organization: their counts add up.
    const parts = (await this.matches(filter, memberships, {})).parts.filter((part) => part.total > 0);
    return sumCounts(await Promise.all(parts.map((part) => this.backend.facetCounts(part.listing, facets))));
  }

  /**
   * A search's parts and total: its full matches as typed, or when that matches nothing, those of
   * the first more lenient reading that matches something (see Reading); then the organizations in
   * the categories its words name (search-categories.ts), when its full matches are fewer than are
   * ranked; or else its partial matches, when the full matches are few.
   */
  private async matches(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView, ranked = false): Promise<SearchMatches<Param>> {
    const typed = this.query(filter)!;
    const typedListing = this.backend.organizationListing(filter, memberships, view, typed);
    // Searched alone, the vocabulary tells closely enough how many match to choose how the matches
    // are read: the ranked window is read while they are counted (unless the words name categories:
    // then the decision reads it, to rank it with them).
    const early = ranked && isSearchAlone(filter, memberships) && this.named(filter) === undefined ? this.rankedWindow(typedListing, typed, typed.estimatedMatches) : undefined;
    early?.catch(() => {});
    const { query, total, fullMatches, inCategories, categories, partial } = await this.decision(filter, memberships);
    const window = fullMatches === undefined ? early : Promise.resolve(this.ranked(fullMatches, query, inCategories));
    const full = this.part(filter, memberships, view, { query, total }, query === typed ? { listing: typedListing, window } : undefined);
    const parts = [full];
    if (categories !== undefined) {
      const { positions } = categories;
      const window = positions.map((position): Candidate => ({ position, rank: 0, names: '' }));
      parts.push({ listing: this.backend.positionsListing(view, positions), total: positions.length, window: async () => window, more: false });
    }
    if (partial !== undefined) parts.push(this.part(filter, memberships, view, partial));
    return { parts, total: parts.reduce((sum, part) => sum + part.total, 0), ...(categories === undefined ? {} : { categories: categories.named }) };
  }

  /** A part of a search's matches; `made`: its listing already made, and its window if already being read. */
  private part(
    filter: OrganizationFilter,
    memberships: readonly Membership[],
    view: OrganizationView,
    { query, total }: { query: SearchQuery; total: number },
    made?: { listing: Listing<Param>; window?: Promise<Candidate[]> },
  ): SearchPart<Param> {
    const listing = made?.listing ?? this.backend.organizationListing(filter, memberships, view, query);
    if (total === 0) return { listing, total, window: async () => [], more: false };
    return { listing, total, window: () => made?.window ?? this.rankedWindow(listing, query, total), more: true };
  }

  /**
   * Which query answers a search (as typed, or read more leniently), how many it matches, its
   * category matches and its partial matches. A page and its facets ask at once: they share one decision.
   */
  private decision(filter: OrganizationFilter, memberships: readonly Membership[]): Promise<SearchDecision> {
    const key = JSON.stringify([filter, memberships]);
    let decision = this.decisions.get(key);
    if (decision === undefined) {
      decision = this.decide(filter, memberships).finally(() => this.decisions.delete(key));
      this.decisions.set(key, decision);
    }
    return decision;
  }

  private async decide(filter: OrganizationFilter, memberships: readonly Membership[]): Promise<SearchDecision> {
    const named = this.named(filter);
    const { query, total } = await this.fullMatches(filter, memberships, named !== undefined);
    const decision: SearchDecision = { query, total };
    if (named !== undefined) {
      const listing = this.backend.organizationListing(filter, memberships, {}, query);
      const [fullMatches, keys] = await Promise.all([
        total === 0 ? [] : this.backend.candidates(listing, RANKED_SEARCH_LIMIT, total),
        this.backend.categoryMembers(filter, memberships, named),
      ]);
      decision.fullMatches = fullMatches;
      decision.inCategories = listedMembers(keys, named);
      // Full matches as many as are ranked say enough of what is sought; fewer are followed by the categories.
      if (total < RANKED_SEARCH_LIMIT) {
        const positions = orderCategoryMatches(keys, named, new Set(fullMatches.map((candidate) => candidate.position)), RANKED_SEARCH_LIMIT);
        if (positions.length > 0) decision.categories = { named, positions };
      }
    }
    // A search whose categories list organizations has no partial matches: what the categories hold
    // says more than names holding some of its words (and counting those apart from the categories'
    // took 30 ms at 2M organizations, the partial matches of `adult literacy` alone 1 ms).
    const partial = total < PARTIAL_MATCHES_BELOW && decision.categories === undefined ? partialMatches(query) : undefined;
    if (partial === undefined) return decision;
    const partialTotal = await this.backend.count(this.backend.organizationListing(filter, memberships, {}, partial));
    return partialTotal === 0 ? decision : { ...decision, partial: { query: partial, total: partialTotal } };
  }

  /**
   * The query of a search's full matches, and how many there are: as typed, or when that matches
   * nothing, the first more lenient reading that matches, unless the words name categories: then
   * they are read as typed (the categories answer the search; `ged` is not respelt `god`).
   */
  private async fullMatches(filter: OrganizationFilter, memberships: readonly Membership[], namesCategories: boolean): Promise<{ query: SearchQuery; total: number }> {
    const typed = this.query(filter)!;
    const total = await this.backend.count(this.backend.organizationListing(filter, memberships, {}, typed));
    if (total > 0 || namesCategories) return { query: typed, total };
    let tried = typed;
    for (const reading of [Reading.shortWords, Reading.respelt]) {
      const lenient = this.query(filter, reading)!;
      if (readAlike(lenient, tried)) continue;
      tried = lenient;
      const lenientTotal = await this.backend.count(this.backend.organizationListing(filter, memberships, {}, lenient));
      if (lenientTotal > 0) return { query: lenient, total: lenientTotal };
    }
    return { query: typed, total };
  }

  /** The first RANKED_SEARCH_LIMIT matches of a search in list order (fewest name words first), ranked. */
  private async rankedWindow(listing: Listing<Param>, query: SearchQuery, matches: number): Promise<Candidate[]> {
    return this.ranked(await this.backend.candidates(listing, RANKED_SEARCH_LIMIT, matches), query);
  }

  private ranked(candidates: Candidate[], query: SearchQuery, inCategories?: ReadonlySet<number>): Candidate[] {
    return rankCandidates(candidates, query, (term) => this.backend.termSize(term), inCategories);
  }

  /** The categories a search's words name, kept per text as its words are (see query). */
  private named(filter: OrganizationFilter): SearchCategories | undefined {
    return this.namedKept.get(filter.search!.join(' '), () => this.categories().match(filter.search!));
  }

  /** What reads searches as categories, made once per dataset. */
  private categories(): CategoryMatcher {
    this.categoryMatcher ??= new CategoryMatcher(
      this.backend.taxonomies,
      [...this.backend.facetLabels.terms].map(([position, label]) => ({ position, taxonomyPosition: label.taxonomyPosition, code: label.code, name: label.name })),
      this.backend.vocabulary,
    );
    return this.categoryMatcher;
  }

  /** The categories' terms as the answer names them. */
  private labels(categories: SearchCategories): CategoryLabel[] {
    const taxonomies = new Map(this.backend.taxonomies.map((taxonomy) => [taxonomy.position, taxonomy.code]));
    return categories.terms.map((position) => {
      const { id, code, name, taxonomyPosition } = this.backend.facetLabels.terms.get(position)!;
      return { id, code, name, taxonomy: taxonomies.get(taxonomyPosition) ?? '' };
    });
  }

  /**
   * Items `start` to `end` (0-based, end excluded) of a part of a search: its first RANKED_SEARCH_LIMIT
   * matches in list order (fewest name words first) ranked (search-ranking.ts), the rest after them in
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

  /** Of the other spellings of a search, the one with the most matches under the same filters, if any has one. */
  private async suggestion(filter: OrganizationFilter, memberships: readonly Membership[]): Promise<string | undefined> {
    let best: { spelling: string; total: number } | undefined;
    for (const spelling of suggestedSearches(filter.search!, this.backend.vocabulary)) {
      const retry = { ...filter, search: [spelling] };
      const total = await this.backend.count(this.backend.organizationListing(retry, memberships, {}, this.query(retry)));
      if (total > (best?.total ?? 0)) best = { spelling, total };
    }
    return best?.spelling;
  }

  /**
   * The search's words and alternatives, kept per text: a page with facets asks for both from one
   * request, and correcting a long word reads the vocabulary for milliseconds.
   */
  private query(filter: OrganizationFilter, reading: Reading = Reading.typed): SearchQuery | undefined {
    if (filter.search === undefined) return undefined;
    return this.queries.get(`${reading}\t${filter.search.join(' ')}`, () => organizationQuery(filter.search!, this.backend.vocabulary, reading));
  }
}
