import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_SECURITY_POLICY } from '../html.ts';
import { homePage, organizationPage, problemPage, resultsPage, taxonomyPage, termPage } from './views.ts';
import type { Facet, Frame, ListQuery, OrganizationJson, TaxonomyJson, TermJson, TermNode } from './views.ts';
import { PAGING_PARAMETERS, pagingOf, positionRange } from '../pagination.ts';
import { ParameterError } from '../problem.ts';
import { readQuery } from '../query.ts';
import { canonicalUuid } from '../reply.ts';
import { organizationFilter, organizationParameters } from '../organization-filter.ts';
import { organizationIdOfNativeId, taxonomyIdOfCode, termIdOfCode } from '../references.ts';
import type { Batches, OrganizationFilter, Store } from '../../store/store.ts';

/**
 * Pages for people, beside the API: each at the API's path without the API prefix (`/organizations/{id}`
 * shows what `/api/hsds/v3/organizations/{id}` holds), so the JSON URLs stay JSON and no cache needs
 * `Vary: Accept`. Cached like the API (ETag, Last-Modified, the response cache). Server-rendered HTML,
 * no script.
 */

/** Ancestors looked up for a term's breadcrumb, at most (a guard against a cycle in a damaged dataset). */
const MAX_TERM_DEPTH = 50;
/** Organizations listed on a term's page; the rest are a link away. */
const TERM_PAGE_ORGANIZATIONS = 10;
/** The facets a search page shows, when its list has any organization. */
const SEARCH_FACETS = [{ kind: 'taxonomy' as const, taxonomy: 'ntee', depth: 1 }, { kind: 'tax_status' as const }];

const PARAMETERS = { ...PAGING_PARAMETERS, ...organizationParameters };

async function frameOf(request: FastifyRequest): Promise<Frame> {
  return { site: request.publicOrigin().replace(/\/+$/, ''), api: request.apiUrl(), dataset: await request.store.info() };
}

const sendPage = (reply: FastifyReply, body: string, status = 200): FastifyReply =>
  reply.code(status).type('text/html; charset=utf-8').header('content-security-policy', PAGE_SECURITY_POLICY).send(body);

async function collect(batches: Batches): Promise<string[]> {
  const items: string[] = [];
  for await (const batch of batches) items.push(...batch);
  return items;
}

/** The query string of a request, as given, for the JSON link of the same list. */
const queryOf = (request: FastifyRequest): string => {
  const index = request.url.indexOf('?');
  return index === -1 ? '' : request.url.slice(index);
};

/** The terms of a taxonomy as a tree (or those below the term `within`), each counting the organizations tagged with it or below it (the facets made at publish). */
async function termTree(store: Store, taxonomy: TaxonomyJson, within?: string): Promise<TermNode[]> {
  const terms = (await collect(store.allTaxonomyTerms({ taxonomyId: taxonomy.id }))).map((json) => JSON.parse(json) as TermJson);
  const byId = new Map(terms.map((term) => [term.id, { term, organizations: 0, children: [] as TermNode[] }]));
  const roots: TermNode[] = [];
  for (const node of byId.values()) {
    const parent = node.term.parent_id === undefined ? undefined : byId.get(node.term.parent_id);
    (parent?.children ?? roots).push(node);
  }
  let depth = 0;
  for (let level = roots; level.length > 0; level = level.flatMap((node) => node.children)) depth++;
  if (depth > 0) {
    const facets = await store.organizationFacets(
      {},
      Array.from({ length: depth }, (_, index) => ({ kind: 'taxonomy' as const, taxonomy: taxonomy.id, depth: index + 1 })),
    );
    for (const values of Object.values(facets)) {
      for (const value of values as Facet[]) {
        const node = value.id === undefined ? undefined : byId.get(value.id);
        if (node !== undefined) node.organizations = value.count;
      }
    }
  }
  return within === undefined ? roots : (byId.get(within)?.children ?? []);
}

/** What the filters of a search page name, as a person reads them. */
async function filterLabels(store: Store, filter: OrganizationFilter, values: Record<string, unknown>): Promise<{ name: string; label: string }[]> {
  const labels: { name: string; label: string }[] = [];
  if (filter.taxonomyTermId !== undefined) {
    const term = JSON.parse((await store.taxonomyTerm(filter.taxonomyTermId)) ?? '{}') as TermJson;
    labels.push({ name: 'taxonomy_term_id', label: `${term.name ?? filter.taxonomyTermId}${term.code ? ` (${term.code})` : ''}${filter.includeDescendants ? ' and the terms below it' : ''}` });
  }
  if (filter.taxonomyId !== undefined) {
    const taxonomy = JSON.parse((await store.taxonomy(filter.taxonomyId)) ?? '{}') as TaxonomyJson;
    labels.push({ name: 'taxonomy_id', label: `any term of ${taxonomy.name ?? filter.taxonomyId}` });
  }
  if (filter.taxStatus !== undefined) labels.push({ name: 'tax_status', label: `tax status ${filter.taxStatus}` });
  if (filter.modifiedSince !== undefined) labels.push({ name: 'modified_after', label: `modified on or after ${String(values.modified_after)}` });
  return labels;
}

/** The query of a search page as links keep it: the parameters given, as given (paging aside). */
function listQueryOf(request: FastifyRequest): ListQuery {
  const query = request.query as Record<string, unknown>;
  const kept: ListQuery = {};
  for (const name of Object.keys(organizationParameters)) if (typeof query[name] === 'string' && query[name] !== '') kept[name] = query[name];
  if (typeof query.per_page === 'string') kept.per_page = query.per_page;
  return kept;
}

export default async function pages(app: FastifyInstance): Promise<void> {
  // A request a page cannot answer is told as a page; anything else goes on to the API's problem handler.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (!(error instanceof ParameterError)) throw error;
    return sendPage(reply, problemPage(await frameOf(request), 'This search cannot be made', `${error.parameter} ${error.reason}.`), 400);
  });
  const notFound = async (request: FastifyRequest, reply: FastifyReply, what: string) =>
    sendPage(reply, problemPage(await frameOf(request), 'Not found', `There is no ${what} at this address in the published dataset.`), 404);

  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const taxonomies = (await collect(request.store.allTaxonomies({}))).map((json) => JSON.parse(json) as TaxonomyJson);
    return sendPage(reply, homePage(await frameOf(request), taxonomies));
  });

  app.get('/organizations', { schema: { hide: true }, preValidation: readQuery(PARAMETERS) }, async (request, reply) => {
    const values = request.parameters;
    const filter = await organizationFilter(request.store, values);
    const paging = pagingOf(values);
    const [page, facets, filters] = await Promise.all([
      request.store.organizations(filter, positionRange(paging)),
      request.store.organizationFacets(filter, SEARCH_FACETS),
      filterLabels(request.store, filter, values),
    ]);
    const frame = await frameOf(request);
    return sendPage(
      reply,
      resultsPage(frame, {
        query: listQueryOf(request),
        total: page.total,
        page: paging.page,
        perPage: paging.perPage,
        organizations: page.items.map((json) => JSON.parse(json) as OrganizationJson),
        suggestion: page.suggestion,
        categories: page.categories,
        facets: facets as Record<string, Facet[]>,
        filters,
        json: `${frame.api}/organizations${queryOf(request)}`,
      }),
    );
  });

  /**
   * A page of one item: found by its UUID, or by another form of its id (a native id, a code), which
   * is redirected to the page by UUID as the API does; else a 404 page.
   */
  const itemPage = (
    path: string,
    noun: string,
    find: (store: Store, id: string) => Promise<string | undefined>,
    resolve: (store: Store, value: string) => Promise<string | undefined>,
    render: (store: Store, json: string, frame: Frame) => Promise<string>,
  ) =>
    app.get<{ Params: { id: string } }>(`/${path}/:id`, { schema: { hide: true } }, async (request, reply) => {
      const { store } = request;
      const id = canonicalUuid(request.params.id);
      const json = id === undefined ? undefined : await find(store, id);
      if (json !== undefined) return sendPage(reply, await render(store, json, await frameOf(request)));
      const canonical = await resolve(store, request.params.id);
      if (canonical !== undefined) return reply.redirect(`${request.publicOrigin()}/${path}/${canonical}`, 308);
      return notFound(request, reply, noun);
    });

  itemPage('organizations', 'published organization', (store, id) => store.organization(id), organizationIdOfNativeId, async (store, json, frame) => {
    const organization = JSON.parse(json) as OrganizationJson;
    const parentJson = organization.parent_organization_id === undefined ? undefined : await store.organization(organization.parent_organization_id);
    return organizationPage(frame, organization, parentJson === undefined ? undefined : (JSON.parse(parentJson) as OrganizationJson));
  });

  itemPage('taxonomies', 'taxonomy', (store, id) => store.taxonomy(id), taxonomyIdOfCode, async (store, json, frame) => {
    const taxonomy = JSON.parse(json) as TaxonomyJson;
    return taxonomyPage(frame, taxonomy, await termTree(store, taxonomy));
  });

  itemPage('taxonomy_terms', 'taxonomy term', (store, id) => store.taxonomyTerm(id), termIdOfCode, async (store, json, frame) => {
    const term = JSON.parse(json) as TermJson;
    const ancestors: TermJson[] = [];
    for (let parentId = term.parent_id; parentId !== undefined && ancestors.length < MAX_TERM_DEPTH; ) {
      const parent = JSON.parse((await store.taxonomyTerm(parentId)) ?? '{}') as TermJson;
      if (parent.id === undefined) break;
      ancestors.unshift(parent);
      parentId = parent.parent_id;
    }
    const taxonomy = term.taxonomy_detail;
    const children = taxonomy === undefined ? [] : await termTree(store, taxonomy, term.id);
    const listed = await store.organizations({ taxonomyTermId: term.id, includeDescendants: true }, { first: 1, count: TERM_PAGE_ORGANIZATIONS });
    return termPage(frame, term, ancestors, children, { total: listed.total, first: listed.items.map((item) => JSON.parse(item) as OrganizationJson) });
  });
}
