import type { FastifyRequest } from 'fastify';
import { ParameterError } from './problem.ts';
import { DEFAULT_PER_PAGE, PAGING_RULES } from './schemas.ts';
import type { Page, PositionRange } from '../store/store.ts';

export interface Paging {
  page: number;
  perPage: number;
}

export interface PagingQueryValues {
  page?: number;
  per_page?: number;
}

export const pagingOf = (query: PagingQueryValues): Paging => ({ page: query.page ?? 1, perPage: query.per_page ?? DEFAULT_PER_PAGE });

export const positionRange = ({ page, perPage }: Paging): PositionRange => ({ first: (page - 1) * perPage + 1, count: perPage });

/**
 * Absolute URLs for other pages of the same list, keeping every other query parameter. The path is
 * the route's canonical one, whatever spelling (percent-encoding, trailing slash) the request used.
 */
function pageUrls(request: FastifyRequest): (page: number) => string {
  const base = `${request.publicOrigin()}${request.routeOptions.url}?`;
  const query = new URL(request.url, 'http://unused').searchParams;
  return (page) => {
    query.set('page', String(page));
    return `${base}${query}`;
  };
}

/**
 * The HSDS list envelope around already-rendered items. `total_pages` is at least 1, so page 1 always
 * exists (possibly empty); a page past the last is a valid, empty page.
 */
export function pageEnvelope(request: FastifyRequest, paging: Paging, page: Page): string {
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
  const head = JSON.stringify({
    total_items: page.total,
    total_pages: totalPages,
    page_number: number,
    size: page.items.length,
    first_page: number === 1,
    last_page: number >= totalPages,
    empty: page.items.length === 0,
  });
  return `${head.slice(0, -1)},"contents":[${page.items.join(',')}],"links":${JSON.stringify(links)}}`;
}

const DECIMAL = /^[0-9]+$/;

/**
 * Paging values must be plain decimal digits. Schema coercion alone would take `1e1`, `+5` or
 * `0x10` as numbers; this runs first, on the raw strings.
 */
export async function rejectNonDecimalPaging(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown>;
  for (const name of ['page', 'per_page']) {
    const value = query[name];
    if (value !== undefined && !(typeof value === 'string' && DECIMAL.test(value))) {
      throw new ParameterError(name, PAGING_RULES[name]!);
    }
  }
}
