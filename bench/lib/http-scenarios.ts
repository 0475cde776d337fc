/**
 * The scenarios of bench/http.ts, their targets (issue 5), and the samples they draw requests from:
 * ids, terms and search words taken from the served dataset before the load starts. Requests are
 * drawn with a seeded generator, so two runs on the same data ask for the same things.
 */
import { fetchJson, fetchRaw } from './load.ts';

const API = '/api/hsds/v3';
const PER_PAGE = 20;
/** What browsers and CDNs send. */
const ACCEPT = { 'accept-encoding': 'br, gzip' };

export type ServerKind = 'cached' | 'uncached';

export interface Scenario {
  name: string;
  description: string;
  /** Which server: as configured by default (response cache on), or with the response cache off. */
  server: ServerKind;
  /** A generator of request paths. */
  paths: (samples: Samples) => () => string;
  headers: (samples: Samples) => Record<string, string>;
  status: number;
  target: { kind: 'ratio'; value: number } | { kind: 'p99'; value: number };
}

export interface Samples {
  dataset: { organizations: number; version: string };
  /** Pages of /organizations at the default page size. */
  pages: number;
  ids: string[];
  terms: { id: string; pages: number }[];
  searches: { query: string; pages: number }[];
  /** ETag of the hot page, as sent with ACCEPT. */
  etag: string;
}

/** Words and phrases common and rare in organization names, for the search scenario. */
const SEARCHES = [
  'church', 'foundation', 'inc', 'food bank', 'veterans', 'school', 'community', 'ministries', 'association', 'library',
  'youth soccer', 'baptist church', 'housing', 'hospital', 'scholarship fund', 'fire department', 'parent teacher', 'lodge',
  'cemetery', 'animal rescue',
];
/** Search pages asked for: the first few, as people page through results. */
const SEARCH_PAGES = 5;

/** mulberry32: small, seeded, good enough to spread requests. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
const pageIn = (next: () => number, pages: number): number => 1 + Math.floor(next() * pages);
const pagesOf = (total: number): number => Math.max(1, Math.ceil(total / PER_PAGE));

export const SCENARIOS: Scenario[] = [
  {
    name: 'hot-page',
    description: 'GET /organizations (first page), answered from the response cache',
    server: 'cached',
    paths: () => () => `${API}/organizations`,
    headers: () => ACCEPT,
    status: 200,
    target: { kind: 'ratio', value: 0.8 },
  },
  {
    name: 'revalidate-304',
    description: 'the hot page with If-None-Match: its ETag',
    server: 'cached',
    paths: () => () => `${API}/organizations`,
    headers: (samples) => ({ ...ACCEPT, 'if-none-match': samples.etag }),
    status: 304,
    target: { kind: 'ratio', value: 0.9 },
  },
  {
    name: 'first-page',
    description: 'GET /organizations (first page), response cache off',
    server: 'uncached',
    paths: () => () => `${API}/organizations`,
    headers: () => ACCEPT,
    status: 200,
    target: { kind: 'p99', value: 5 },
  },
  {
    name: 'any-page',
    description: 'GET /organizations?page=N, N uniform over every page, response cache off',
    server: 'uncached',
    paths: (samples) => {
      const next = random(1);
      return () => `${API}/organizations?page=${pageIn(next, samples.pages)}`;
    },
    headers: () => ACCEPT,
    status: 200,
    target: { kind: 'p99', value: 5 },
  },
  {
    name: 'organization',
    description: 'GET /organizations/{id}, ids drawn from every depth, response cache off',
    server: 'uncached',
    paths: (samples) => {
      const next = random(2);
      return () => `${API}/organizations/${pick(next, samples.ids)}`;
    },
    headers: () => ACCEPT,
    status: 200,
    target: { kind: 'p99', value: 2 },
  },
  {
    name: 'term-page',
    description: 'GET /organizations?taxonomy_term_id=T&page=N, T any term with organizations, N uniform over its pages',
    server: 'uncached',
    paths: (samples) => {
      const next = random(3);
      return () => {
        const term = pick(next, samples.terms);
        return `${API}/organizations?taxonomy_term_id=${term.id}&page=${pageIn(next, term.pages)}`;
      };
    },
    headers: () => ACCEPT,
    status: 200,
    target: { kind: 'p99', value: 10 },
  },
  {
    name: 'search',
    description: `GET /organizations?search=Q&page=N, Q one of ${SEARCHES.length} common and rare words, N among the first ${SEARCH_PAGES} pages`,
    server: 'uncached',
    paths: (samples) => {
      const next = random(4);
      return () => {
        const search = pick(next, samples.searches);
        return `${API}/organizations?search=${encodeURIComponent(search.query)}&page=${pageIn(next, Math.min(SEARCH_PAGES, search.pages))}`;
      };
    },
    headers: () => ACCEPT,
    status: 200,
    target: { kind: 'p99', value: 25 },
  },
];

/** Draws the samples from the served dataset (a few thousand requests). */
export async function collectSamples(origin: string): Promise<Samples> {
  const root = await fetchJson(`${origin}${API}/`);
  const organizations: number = root.dataset.organizations;
  const pages = pagesOf(organizations);
  const totalOf = async (query: string): Promise<number> => (await fetchJson(`${origin}${API}/organizations?per_page=1&${query}`)).total_items;

  const next = random(5);
  const ids: string[] = [];
  const idPages = Math.ceil(organizations / 100);
  for (let draw = 0; draw < 20; draw++) {
    const page = await fetchJson(`${origin}${API}/organizations?per_page=100&page=${pageIn(next, idPages)}`);
    ids.push(...page.contents.map((item: { id: string }) => item.id));
  }

  const terms: Samples['terms'] = [];
  for (let page = 1; ; page++) {
    const list = await fetchJson(`${origin}${API}/taxonomy_terms?per_page=100&page=${page}`);
    for (const term of list.contents as { id: string }[]) {
      const total = await totalOf(`taxonomy_term_id=${term.id}`);
      if (total > 0) terms.push({ id: term.id, pages: pagesOf(total) });
    }
    if (list.last_page) break;
  }

  const searches: Samples['searches'] = [];
  for (const query of SEARCHES) {
    const total = await totalOf(`search=${encodeURIComponent(query)}`);
    if (total > 0) searches.push({ query, pages: pagesOf(total) });
  }

  const etag = (await fetchRaw(`${origin}${API}/organizations`, ACCEPT)).headers.etag!;
  return { dataset: { organizations, version: root.dataset.version }, pages, ids, terms, searches, etag };
}
