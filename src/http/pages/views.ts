import { html, Html, PAGE_STYLE } from '../html.ts';
import type { DatasetInfo } from '../../store/store.ts';
import { counted, formatCount } from '../../text.ts';

/**
 * The pages for people: each shows what one or two JSON documents of the API hold, links to them,
 * and reads without script on a phone. Values come from the JSON as served, escaped by `html`.
 */

/** Where a page is, and what every page says about the dataset. */
export interface Frame {
  /** The site's absolute base (the public base URL, or this request's origin), without a trailing slash. */
  site: string;
  /** The API base under it. */
  api: string;
  dataset: DatasetInfo;
}

export interface TaxonomyJson {
  id: string;
  code?: string;
  name: string;
  description?: string;
  uri?: string;
  version?: string;
}

export interface TermJson {
  id: string;
  code?: string;
  name: string;
  description?: string;
  parent_id?: string;
  taxonomy?: string;
  taxonomy_id?: string;
  children_count?: number;
  taxonomy_detail?: TaxonomyJson;
}

export interface Classification {
  taxonomy: string;
  taxonomy_id: string;
  taxonomy_term_id: string;
  code: string;
  name: string;
}

/** An organization as listed or in full: the fields shown by name, and any other field in the table. */
export interface OrganizationJson {
  id: string;
  name: string;
  alternate_name?: string;
  description?: string;
  classifications?: Classification[];
  organization_identifiers?: { identifier_scheme?: string; identifier_type?: string; identifier?: string }[];
  additional_websites?: { url?: string; label?: string }[];
  attributes?: unknown[];
  parent_organization_id?: string;
  [field: string]: unknown;
}

export interface Facet {
  id?: string;
  code?: string;
  name?: string;
  value?: string;
  count: number;
}


export const organizationUrl = (frame: Frame, id: string): string => `${frame.site}/organizations/${encodeURIComponent(id)}`;
export const termUrl = (frame: Frame, id: string): string => `${frame.site}/taxonomy_terms/${encodeURIComponent(id)}`;
export const taxonomyUrl = (frame: Frame, id: string): string => `${frame.site}/taxonomies/${encodeURIComponent(id)}`;
export const searchUrl = (frame: Frame, query: Record<string, string | undefined>): string => {
  const parameters = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const text = parameters.toString();
  return `${frame.site}/organizations${text === '' ? '' : `?${text}`}`;
};

/** A whole page: the site's header with its search box, the content, and the dataset and its JSON in the footer. */
export function page(frame: Frame, options: { title: string; json: string; search?: string }, content: Html): string {
  const published = new Date(frame.dataset.publishedAt);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<link rel="alternate" type="application/json" href="${options.json}">
<title>${options.title} · hsds-org-api</title>
<style>${new Html(PAGE_STYLE + LAYOUT_STYLE)}</style>
</head>
<body>
<header>
<nav aria-label="Site"><a href="${frame.site}/" class="home">hsds-org-api</a>
<form role="search" action="${frame.site}/organizations" method="get"><label for="search">Search organizations</label> <input id="search" name="search" type="search" value="${options.search ?? ''}" maxlength="256"> <button type="submit">Search</button></form></nav>
</header>
<main>
${content}
<p class="json">This page as JSON: <a href="${options.json}">${options.json}</a></p>
</main>
<footer>
<p>Dataset <code>${frame.dataset.version}</code>, published ${published.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${counted(frame.dataset.organizations, 'organization')}, ${counted(frame.dataset.taxonomies, 'taxonomy', 'taxonomies')}, ${counted(frame.dataset.taxonomyTerms, 'term')}.</p>
<p><a href="${frame.api}/">API root (JSON)</a> · <a href="${frame.api}/docs">API documentation</a> · <a href="${frame.api}/openapi.json">OpenAPI</a> · <a href="${frame.api}/profile">HSDS profile</a></p>
</footer>
</body>
</html>
`.text;
}

const LAYOUT_STYLE = `
  header nav { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
  header .home { font-weight: 600; text-decoration: none; }
  header form { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; }
  header label { font-size: .85rem; }
  input[type=search] { font: inherit; padding: .25rem .4rem; min-width: 0; width: 14rem; max-width: 60vw; border: 1px solid #8c959f; border-radius: 4px; }
  button { font: inherit; padding: .25rem .7rem; border: 1px solid #0b5cad; background: #0b5cad; color: #fff; border-radius: 4px; }
  footer { max-width: 46rem; margin: 0 auto; padding: 0 1.25rem 2rem; font-size: .85rem; color: #454c54; }
  .json { font-size: .85rem; margin-top: 2.5rem; }
  .results { padding-left: 1.4rem; } .results li { margin: .7rem 0; }
  .meta { color: #454c54; font-size: .9rem; }
  .count { color: #454c54; font-size: .85rem; white-space: nowrap; }
  .pages { display: flex; gap: 1rem; flex-wrap: wrap; }
  details > ul, .tree { list-style: none; padding-left: 1.1rem; }
  summary { cursor: pointer; color: #454c54; font-size: .9rem; }
  dl { display: grid; grid-template-columns: minmax(7rem, max-content) 1fr; gap: .3rem 1rem; }
  dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
`;

const linkOrText = (value: string): Html => (/^https?:\/\//i.test(value) ? html`<a href="${value}">${value}</a>` : html`${value}`);

/** The home page: what this is, the dataset, a search box, the taxonomies, and where the JSON is. */
export function homePage(frame: Frame, taxonomies: TaxonomyJson[]): string {
  const { dataset } = frame;
  return page(
    frame,
    { title: 'Organizations and taxonomies', json: `${frame.api}/` },
    html`<h1>Organizations and taxonomies</h1>
<p>A directory of ${counted(dataset.organizations, 'published organization')}, classified in ${counted(dataset.taxonomies, 'taxonomy', 'taxonomies')} of ${counted(dataset.taxonomyTerms, 'term')}, published as open data in the Open Referral Human Services Data Specification (HSDS 3.2.3). Everything on these pages is also JSON, for programs.</p>
<form role="search" action="${frame.site}/organizations" method="get"><p><label for="home-search">Find an organization by name or by what it does</label><br>
<input id="home-search" name="search" type="search" maxlength="256" placeholder="food bank"> <button type="submit">Search</button></p></form>
<p><a href="${frame.site}/organizations">Browse every organization</a></p>
<h2>Taxonomies</h2>
<ul>${taxonomies.map((taxonomy) => html`<li><a href="${taxonomyUrl(frame, taxonomy.id)}">${taxonomy.name}</a>${taxonomy.description ? html`: ${taxonomy.description}` : ''}</li>`)}</ul>
<h2>For programs</h2>
<ul>
<li><a href="${frame.api}/">The API root</a> (JSON) and <a href="${frame.api}/docs">its documentation</a>, with <a href="${frame.api}/openapi.json">the OpenAPI document</a></li>
<li><a href="${frame.api}/profile">The HSDS profile</a> this API follows</li>
<li><a href="${frame.api}/datapackage.zip">The whole dataset as an HSDS data package</a> (a ZIP of CSV files, for spreadsheets and HSDS tools)</li>
</ul>`,
  );
}

/** The filters of a search page, as query parameters (page left out). */
export type ListQuery = Record<string, string | undefined>;

export interface ResultsPage {
  query: ListQuery;
  total: number;
  page: number;
  perPage: number;
  organizations: OrganizationJson[];
  suggestion?: string;
  /** The categories the search was also read as (see search-categories.ts). */
  categories?: { id: string; name: string }[];
  facets?: Record<string, Facet[]>;
  /** What the filters name, as people read them (a term's name for its id). */
  filters: { name: string; label: string }[];
  json: string;
}

const facetTitles: Record<string, string> = { 'ntee:1': 'By NTEE major group', tax_status: 'By tax status' };

/** Search results, or the whole list: the same parameters and filters as the API's /organizations. */
export function resultsPage(frame: Frame, results: ResultsPage): string {
  const { query, total } = results;
  const search = query.search;
  const title = search === undefined ? 'Organizations' : `Organizations matching “${search}”`;
  const lastPage = Math.max(1, Math.ceil(total / results.perPage));
  const pageLink = (number: number) => searchUrl(frame, { ...query, page: number === 1 ? undefined : String(number) });
  const without = (name: string) => searchUrl(frame, { ...query, [name]: undefined, ...(name === 'taxonomy_term_id' ? { include_descendants: undefined } : {}), page: undefined });
  const first = (results.page - 1) * results.perPage + 1;
  return page(
    frame,
    { title, json: results.json, search },
    html`<h1>${title}</h1>
${results.filters.length === 0 ? '' : html`<p>Filtered by ${results.filters.map((filter, index) => html`${index === 0 ? '' : ', '}${filter.label} (<a href="${without(filter.name)}">remove</a>)`)}.</p>`}
<p role="status">${total === 0 ? 'No organization matches.' : results.organizations.length === 0 ? `${counted(total, 'organization')}; this page is past the last.` : `${counted(total, 'organization')}; ${formatCount(first)} to ${formatCount(first + results.organizations.length - 1)} shown.`}
${results.suggestion === undefined ? '' : html` Did you mean <a href="${searchUrl(frame, { ...query, search: results.suggestion, page: undefined })}">${results.suggestion}</a>?`}
${results.categories === undefined || results.categories.length === 0
  ? ''
  : html` Including organizations in ${results.categories.map(
      (category, index) =>
        html`${index === 0 ? '' : index === results.categories!.length - 1 ? ' and ' : ', '}<a href="${searchUrl(frame, { taxonomy_term_id: category.id, include_descendants: 'true' })}"><em>${category.name}</em></a>`,
    )}.`}</p>
${results.organizations.length === 0 ? '' : html`<ol class="results" start="${first}">${results.organizations.map((organization) => organizationItem(frame, organization))}</ol>`}
${lastPage > 1 && total > 0
  ? html`<nav aria-label="Pages" class="pages">${results.page > 1 ? html`<a href="${pageLink(results.page - 1)}" rel="prev">Previous page</a>` : ''}<span>Page ${formatCount(results.page)} of ${formatCount(lastPage)}</span>${results.page < lastPage ? html`<a href="${pageLink(results.page + 1)}" rel="next">Next page</a>` : ''}</nav>`
  : ''}
${Object.entries(results.facets ?? {}).filter(([, values]) => values.length > 0 && total > 0).map(
  ([name, values]) => html`<h2>${facetTitles[name] ?? name}</h2>
<ul>${values.map((value) => {
    const filter = value.id !== undefined ? { taxonomy_term_id: value.id, include_descendants: 'true' } : { tax_status: value.value };
    return html`<li><a href="${searchUrl(frame, { ...query, ...filter, page: undefined })}">${value.name ?? value.value}${value.code === undefined ? '' : html` (${value.code})`}</a> <span class="count">${formatCount(value.count)}</span></li>`;
  })}</ul>`,
)}`,
  );
}

function organizationItem(frame: Frame, organization: OrganizationJson): Html {
  const details = [organization.tax_status, ...(organization.classifications ?? []).filter((term) => term.taxonomy === 'ntee').map((term) => `${term.code} ${term.name}`)].filter(
    (detail): detail is string => typeof detail === 'string' && detail !== '',
  );
  return html`<li><a href="${organizationUrl(frame, organization.id)}">${organization.name}</a>${organization.alternate_name ? html` <span class="meta">(${organization.alternate_name})</span>` : ''}${details.length === 0 ? '' : html`<br><span class="meta">${details.join(' · ')}</span>`}</li>`;
}

/** Fields shown in their own way, not again in the table of the rest. */
const SHOWN_APART = new Set(['id', 'name', 'alternate_name', 'description', 'classifications', 'attributes', 'organization_identifiers', 'additional_websites', 'parent_organization_id']);

const fieldLabel = (field: string): string => field.replaceAll('_', ' ').replace(/^./, (letter) => letter.toUpperCase());

/** One organization: every field it is served with, its classifications linked to their terms. */
export function organizationPage(frame: Frame, organization: OrganizationJson, parent: OrganizationJson | undefined): string {
  const byTaxonomy = new Map<string, Classification[]>();
  for (const term of organization.classifications ?? []) byTaxonomy.set(term.taxonomy, [...(byTaxonomy.get(term.taxonomy) ?? []), term]);
  const fields = Object.entries(organization).filter(([field, value]) => !SHOWN_APART.has(field) && value !== '' && value !== null && value !== undefined);
  const json = `${frame.api}/organizations/${organization.id}`;
  return page(
    frame,
    { title: organization.name, json },
    html`<h1>${organization.name}</h1>
${organization.alternate_name ? html`<p class="meta">Also known as ${organization.alternate_name}</p>` : ''}
${organization.description ? html`<p>${organization.description}</p>` : ''}
<dl>
${fields.map(([field, value]) => html`<dt>${fieldLabel(field)}</dt><dd>${typeof value === 'string' ? linkOrText(value) : JSON.stringify(value)}</dd>`)}
${parent === undefined ? '' : html`<dt>Parent organization</dt><dd><a href="${organizationUrl(frame, parent.id)}">${parent.name}</a></dd>`}
<dt>Id</dt><dd><code>${organization.id}</code></dd>
</dl>
${(organization.additional_websites ?? []).length === 0
  ? ''
  : html`<h2>Websites</h2><ul>${organization.additional_websites!.map((site) => html`<li>${site.label ? html`${site.label}: ` : ''}${linkOrText(site.url ?? '')}</li>`)}</ul>`}
${(organization.organization_identifiers ?? []).length === 0
  ? ''
  : html`<h2>Identifiers</h2><ul>${organization.organization_identifiers!.map((identifier) => html`<li>${identifier.identifier_type ?? identifier.identifier_scheme}: <code>${identifier.identifier}</code>${identifier.identifier_scheme ? html` <span class="meta">(${identifier.identifier_scheme})</span>` : ''}</li>`)}</ul>`}
<h2>Classifications</h2>
${byTaxonomy.size === 0
  ? html`<p>None.</p>`
  : [...byTaxonomy].map(
      ([taxonomy, terms]) => html`<h3>${taxonomy}</h3><ul>${terms.map((term) => html`<li><a href="${termUrl(frame, term.taxonomy_term_id)}">${term.name}</a> <code>${term.code}</code></li>`)}</ul>`,
    )}`,
  );
}

/** A node of a taxonomy's tree, with the organizations tagged with it or below it. */
export interface TermNode {
  term: TermJson;
  organizations: number;
  children: TermNode[];
}

function treeItem(frame: Frame, node: TermNode): Html {
  const label = html`<a href="${termUrl(frame, node.term.id)}">${node.term.name}</a> ${node.term.code ? html`<code>${node.term.code}</code> ` : ''}<span class="count">${counted(node.organizations, 'organization')}</span>`;
  if (node.children.length === 0) return html`<li>${label}</li>`;
  // The term's link beside its disclosure, not in it: a link inside a summary is a control inside a control.
  return html`<li>${label}<details><summary>${counted(node.children.length, 'term')} below</summary><ul>${node.children.map((child) => treeItem(frame, child))}</ul></details></li>`;
}

/** A taxonomy: what it is, and its terms as a tree to open, each with its organizations counted. */
export function taxonomyPage(frame: Frame, taxonomy: TaxonomyJson, roots: TermNode[]): string {
  return page(
    frame,
    { title: taxonomy.name, json: `${frame.api}/taxonomies/${taxonomy.id}` },
    html`<h1>${taxonomy.name}</h1>
${taxonomy.description ? html`<p>${taxonomy.description}</p>` : ''}
<dl>${taxonomy.code ? html`<dt>Code</dt><dd><code>${taxonomy.code}</code></dd>` : ''}${taxonomy.version ? html`<dt>Version</dt><dd>${taxonomy.version}</dd>` : ''}${taxonomy.uri ? html`<dt>Source</dt><dd>${linkOrText(taxonomy.uri)}</dd>` : ''}</dl>
<h2>Terms</h2>
<p class="meta">Each term counts the organizations tagged with it or with a term below it.</p>
<ul class="tree">${roots.map((node) => treeItem(frame, node))}</ul>
<p class="json">Its terms as JSON: <a href="${frame.api}/taxonomy_terms?taxonomy_id=${taxonomy.id}">${frame.api}/taxonomy_terms?taxonomy_id=${taxonomy.id}</a></p>`,
  );
}

/** A term: where it is in its taxonomy, the terms below it, and the organizations under it. */
export function termPage(
  frame: Frame,
  term: TermJson,
  ancestors: TermJson[],
  children: TermNode[],
  organizations: { total: number; first: OrganizationJson[] },
): string {
  const taxonomy = term.taxonomy_detail;
  const listQuery = { taxonomy_term_id: term.id, include_descendants: 'true' };
  return page(
    frame,
    { title: term.name, json: `${frame.api}/taxonomy_terms/${term.id}` },
    html`<nav aria-label="Breadcrumb" class="meta">${taxonomy === undefined ? '' : html`<a href="${taxonomyUrl(frame, taxonomy.id)}">${taxonomy.name}</a>`}${ancestors.map((ancestor) => html` › <a href="${termUrl(frame, ancestor.id)}">${ancestor.name}</a>`)}</nav>
<h1>${term.name}${term.code ? html` <code>${term.code}</code>` : ''}</h1>
${term.description ? html`<p>${term.description}</p>` : ''}
${children.length === 0 ? '' : html`<h2>Terms below it</h2><ul class="tree">${children.map((node) => treeItem(frame, node))}</ul>`}
<h2>Organizations</h2>
<p>${counted(organizations.total, 'organization is', 'organizations are')} tagged with ${term.name}${children.length === 0 ? '' : ' or a term below it'}.</p>
${organizations.first.length === 0 ? '' : html`<ol class="results">${organizations.first.map((organization) => organizationItem(frame, organization))}</ol>`}
${organizations.total > organizations.first.length ? html`<p><a href="${searchUrl(frame, listQuery)}">All ${counted(organizations.total, 'organization')}</a></p>` : ''}
<p class="json">These organizations as JSON: <a href="${frame.api}/organizations?taxonomy_term_id=${term.id}&amp;include_descendants=true">${frame.api}/organizations?taxonomy_term_id=${term.id}&amp;include_descendants=true</a></p>`,
  );
}

/** What a person gets for a page that does not exist, or a request the page cannot answer. */
export function problemPage(frame: Frame, title: string, detail: string): string {
  return page(frame, { title, json: `${frame.api}/` }, html`<h1>${title}</h1><p>${detail}</p><p><a href="${frame.site}/">Go to the home page</a></p>`);
}
