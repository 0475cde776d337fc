import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendJson } from './reply.ts';
import { integerParameter } from './query.ts';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from './schemas.ts';
import type { Page, PositionRange } from '../store/store.ts';

export const PAGING_PARAMETERS = {
  page: integerParameter(1, Number.MAX_SAFE_INTEGER, 1, 'Page number, from 1. A page past the last is empty.'),
  per_page: integerParameter(1, MAX_PER_PAGE, DEFAULT_PER_PAGE, `Items per page, 1 to ${MAX_PER_PAGE}.`),
};

export interface Paging {
  page: number;
  perPage: number;
}

export const pagingOf = (parameters: Record<string, unknown>): Paging => ({
  page: (parameters.page as number | undefined) ?? 1,
  perPage: (parameters.per_page as number | undefined) ?? DEFAULT_PER_PAGE,
});

export const positionRange = ({ page, perPage }: Paging): PositionRange => ({ first: (page - 1) * perPage + 1, count: perPage });

/**
 * Absolute URLs for other pages of the same list, keeping every other query parameter (sorted by
 * name). The path is the route's canonical one, whatever spelling (percent-encoding, trailing slash)
 * the request used.
 */
function pageUrls(request: FastifyRequest): (page: number) => string {
  const base = `${request.publicOrigin()}${request.routeOptions.url}?`;
  const query = new URL(request.url, 'http://unused').searchParams;
  // Sorted, so a response does not depend on the order the request gave (see response-cache).
  query.sort();
  return (page) => {
    query.set('page', String(page));
    return `${base}${query}`;
  };
}

/**
 * The HSDS list envelope around already-rendered items, and the same links as an RFC 8288 `Link`
 * header (`<url>; rel="next"`, …), which clients follow without reading the body. `total_pages` is
 * at least 1, so page 1 always exists (possibly empty); a page past the last is a valid, empty page.
 */
function pageEnvelope(request: FastifyRequest, paging: Paging, page: Page): { body: string; link: string } {
  const totalPages = Math.max(1, Math.ceil(page.total / paging.perPage));
  const number = paging.page;
  const pageUrl = pageUrls(request);
  const links: Record<string, string> = {
    self: pageUrl(number),
    first: pageUrl(1),
    last: pageUrl(totalPages),
  };
  if (number > 1) links.prev = pageUrl(Math.min(number - 1, totalPages));
  if (number < totalPages) links.next = pageUrl(number + 1);
  // The URLs are made by URLSearchParams: they hold no `<`, `>`, `,` or `;` to quote.
  const link = Object.entries(links)
    .map(([rel, url]) => `<${url}>; rel="${rel}"`)
    .join(', ');
  const head = JSON.stringify({
    total_items: page.total,
    total_pages: totalPages,
    page_number: number,
    size: page.items.length,
    first_page: number === 1,
    last_page: number >= totalPages,
    empty: page.items.length === 0,
    search_suggestion: page.suggestion,
    search_categories: page.categories,
    facets: page.facets,
  });
  return { body: `${head.slice(0, -1)},"contents":[${page.items.join(',')}],"links":${JSON.stringify(links)}}`, link };
}

/** Sends a page of a list: the envelope, and its links in the `Link` header. */
export function sendPage(request: FastifyRequest, reply: FastifyReply, paging: Paging, page: Page): FastifyReply {
  const { body, link } = pageEnvelope(request, paging, page);
  return sendJson(reply.header('link', link), body);
}
