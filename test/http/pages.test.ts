import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixtureDataset, publishedOrganizations, taxonomies, terms } from '../fixtures/dataset.ts';
import { API, getJson, useTestApp } from '../helpers/app.ts';
import { organizationId } from '../../src/hsds/ids.ts';

/** Pages for people: what each shows of the JSON beside it, its links, caching, and escaping. */

const ORIGIN = 'http://localhost';

async function pageOf(app: ReturnType<ReturnType<typeof useTestApp>>['app'], url: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ url, headers });
  return { status: response.statusCode, headers: response.headers, body: response.body };
}

/** The page a code or native id leads to: its 308, followed. */
async function pageByCode(app: Parameters<typeof pageOf>[0], url: string) {
  const redirect = await pageOf(app, url);
  assert.equal(redirect.status, 308, url);
  return pageOf(app, new URL(String(redirect.headers.location)).pathname);
}

/** The text a person reads: tags dropped, entities decoded. */
const readable = (body: string): string =>
  body
    .replace(/<style>[\s\S]*?<\/style>/g, '')
    .replace(/<\/?(a|code|span)\b[^>]*>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!)
    .replace(/\s+/g, ' ');

const hrefs = (body: string): string[] => [...body.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'));

describe('pages for people', () => {
  const test = useTestApp();

  it('has a home page at the site root: the dataset, a search box, the taxonomies, and the JSON and docs', async () => {
    const { app } = test();
    const home = await pageOf(app, '/');
    assert.equal(home.status, 200);
    assert.match(String(home.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(String(home.headers['content-security-policy']), /default-src 'none'/);
    const text = readable(home.body);
    assert.match(text, /23 published organizations, classified in 2 taxonomies of 30 terms/);
    assert.match(home.body, /<form role="search" action="http:\/\/localhost\/organizations" method="get">/);
    const links = hrefs(home.body);
    for (const link of [`${ORIGIN}${API}/`, `${ORIGIN}${API}/docs`, `${ORIGIN}${API}/openapi.json`, `${ORIGIN}${API}/profile`]) assert.ok(links.includes(link), link);
    const taxonomyLinks = links.filter((link) => link.startsWith(`${ORIGIN}/taxonomies/`));
    assert.equal(taxonomyLinks.length, taxonomies.length);
    for (const link of taxonomyLinks) assert.equal((await pageOf(app, link.slice(ORIGIN.length))).status, 200, link);
  });

  it('is cached like the API: validators, max-age, and 304s', async () => {
    const { app } = test();
    for (const url of ['/', '/organizations?search=shelter', `/organizations/${organizationId('NAT-001')}`]) {
      const first = await pageOf(app, url);
      assert.match(String(first.headers['cache-control']), /^public, max-age=\d+/, url);
      assert.ok(first.headers.etag !== undefined && first.headers['last-modified'] !== undefined, url);
      assert.equal((await pageOf(app, url, { 'if-none-match': String(first.headers.etag) })).status, 304, url);
    }
  });

  it('lists search results in the API\'s order, with its filters, pages and facets', async () => {
    const { app } = test();
    const api = (await getJson(app, `${API}/organizations?search=shelter&per_page=1`)).body;
    const results = await pageOf(app, '/organizations?search=shelter&per_page=1');
    assert.equal(results.status, 200);
    const names = [...results.body.matchAll(/<li><a href="[^"]*\/organizations\/[^"]*">([^<]*)<\/a>/g)].map((match) => match[1]);
    assert.deepEqual(names, api.contents.map((organization: { name: string }) => organization.name));
    assert.match(readable(results.body), new RegExp(`${api.total_items} organizations; 1 to 1 shown`));
    assert.ok(hrefs(results.body).includes(`${ORIGIN}/organizations?search=shelter&per_page=1&page=2`), 'the next page');
    assert.ok(hrefs(results.body).includes(`${ORIGIN}${API}/organizations?search=shelter&per_page=1`), 'the JSON it shows');

    // Filters as the API takes them, and the facets of the filtered list (tax status; this dataset has no NTEE).
    const filtered = await pageOf(app, '/organizations?taxonomy_term_id=things:A&include_descendants=true');
    const apiFiltered = (await getJson(app, `${API}/organizations?taxonomy_term_id=things:A&include_descendants=true&per_page=100&facets=tax_status`)).body;
    assert.match(readable(filtered.body), new RegExp(`Filtered by Thing A \\(A\\) and the terms below it \\(remove\\)`));
    assert.match(readable(filtered.body), new RegExp(`${apiFiltered.total_items} organizations`));
    for (const facet of apiFiltered.facets.tax_status) assert.match(readable(filtered.body), new RegExp(`${facet.value.replace(/[()]/g, '\\$&')} ${facet.count}`));

    // A search that names a category says so, and links to the category's own list.
    const categorised = await pageOf(app, '/organizations?search=blue');
    const apiCategorised = (await getJson(app, `${API}/organizations?search=blue`)).body;
    assert.deepEqual(apiCategorised.search_categories.map((term: { name: string }) => term.name), ['BLUE']);
    assert.match(readable(categorised.body), new RegExp(`${apiCategorised.total_items} organizations?; .* Including organizations in BLUE ?\\.`));
    assert.ok(hrefs(categorised.body).includes(`${ORIGIN}/organizations?taxonomy_term_id=${apiCategorised.search_categories[0].id}&include_descendants=true`));
    assert.doesNotMatch(readable(results.body), /Including organizations in/, 'a search naming no category says nothing of it');

    const misspelt = await pageOf(app, '/organizations?search=shaltir');
    assert.match(readable(misspelt.body), /No organization matches\. Did you mean shelter\?/);

    const bad = await pageOf(app, '/organizations?per_page=0');
    assert.equal(bad.status, 400);
    assert.match(String(bad.headers['content-type']), /^text\/html/);
    assert.match(readable(bad.body), /per_page must be/);
  });

  it('shows an organization with every field it is served with, its terms linked, and its JSON', async () => {
    const { app } = test();
    const id = organizationId('NAT-002');
    const json = (await getJson(app, `${API}/organizations/${id}`)).body;
    const shown = await pageOf(app, `/organizations/${id}`);
    assert.equal(shown.status, 200);
    const text = readable(shown.body);
    for (const [field, value] of Object.entries(json)) {
      if (typeof value === 'string' && value !== '') assert.ok(text.includes(value), `${field}: ${value}`);
    }
    for (const site of json.additional_websites) assert.ok(hrefs(shown.body).includes(site.url), site.url);
    for (const term of json.classifications) {
      const link = `${ORIGIN}/taxonomy_terms/${term.taxonomy_term_id}`;
      assert.ok(hrefs(shown.body).includes(link), term.code);
      assert.equal((await pageOf(app, link.slice(ORIGIN.length))).status, 200);
    }
    assert.ok(hrefs(shown.body).includes(`${ORIGIN}${API}/organizations/${id}`));

    const byNativeId = await pageOf(app, '/organizations/NAT-002');
    assert.equal(byNativeId.status, 308);
    assert.equal(byNativeId.headers.location, `${ORIGIN}/organizations/${id}`);
    const unknown = await pageOf(app, '/organizations/HIDDEN-2');
    assert.equal(unknown.status, 404, 'an unpublished organization is not found');
    assert.match(String(unknown.headers['content-type']), /^text\/html/);
  });

  it('shows a taxonomy as a tree, counting the organizations under each term as the API does', async () => {
    const { app } = test();
    const shown = await pageByCode(app, '/taxonomies/things');
    const text = readable(shown.body);
    for (const code of ['A', 'F', 'B']) {
      const total = (await getJson(app, `${API}/organizations?taxonomy_term_id=things:${code}&include_descendants=true`)).body.total_items;
      assert.match(text, new RegExp(`Thing ${code} ${code} ${total} organizations?`), code);
    }
    // Thing F is below Thing A: inside its <details>.
    assert.match(shown.body, />Thing A<\/a>[^<]*<code>A<\/code>[^]*?<details><summary>4 terms below<\/summary>[^]*?Thing F[^]*?<\/details>/);
    assert.equal(terms.filter((term) => term.taxonomy === 'things').length, [...shown.body.matchAll(/\/taxonomy_terms\//g)].length);
  });

  it('shows a term: its place in the tree, the terms below it, and its organizations', async () => {
    const { app } = test();
    const shown = await pageByCode(app, '/taxonomy_terms/things:F');
    const text = readable(shown.body);
    assert.match(text, /Things › Thing A Thing F F/);
    const listed = (await getJson(app, `${API}/organizations?taxonomy_term_id=things:F&include_descendants=true`)).body;
    assert.match(text, new RegExp(`${listed.total_items} organizations? (is|are) tagged with Thing F`));
    for (const organization of listed.contents) assert.ok(text.includes(organization.name), organization.name);
    const below = readable((await pageByCode(app, '/taxonomy_terms/things:A')).body);
    assert.match(below, /Terms below it Thing F F/);
  });

  it('answers a path it does not know with the API\'s problem, as before', async () => {
    const { app } = test();
    const response = await app.inject({ url: '/nowhere' });
    assert.equal(response.statusCode, 404);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  });
});

describe('pages for people behind a proxy', () => {
  const test = useTestApp(undefined, { publicBaseUrl: 'https://data.example.org/hsds' });

  it('link to each other and to the JSON under the public base URL', async () => {
    const { app } = test();
    const home = await pageOf(app, '/');
    const links = hrefs(home.body).filter((link) => !link.startsWith('data:'));
    assert.ok(links.length > 5);
    for (const link of links) assert.ok(link.startsWith('https://data.example.org/hsds/'), link);
    assert.match(home.body, /action="https:\/\/data\.example\.org\/hsds\/organizations"/);
    assert.equal((await pageOf(app, '/organizations/NAT-002')).headers.location, `https://data.example.org/hsds/organizations/${organizationId('NAT-002')}`);
  });
});

describe('pages for people: data is escaped', () => {
  const hostile = `<script>alert("x")</script> Tom & Jerry's "Shelter"`;
  const test = useTestApp(
    fixtureDataset({
      taxonomies: [...taxonomies, { code: 'evil', name: '<img src=x onerror=alert(1)> Evil & Co', description: '"quoted" <b>bold</b>' }],
      terms: [...terms, { taxonomy: 'evil', code: 'E1', name: '</a><script>alert(2)</script>', description: "it's <i>" }],
      organizations: [
        ...publishedOrganizations,
        {
          externalId: 'EVIL-1',
          status: 'published',
          name: hostile,
          alternateName: '<iframe src="https://example.org">',
          description: 'A & B <style>body{display:none}</style>',
          website: 'javascript:alert(3)',
          identifiers: [],
          tags: [{ taxonomy: 'evil', code: 'E1' }],
        },
      ],
    }),
  );

  it('escapes names, descriptions and fields on every page, and links only http(s) URLs', async () => {
    const { app } = test();
    const id = organizationId('EVIL-1');
    const term = (await getJson(app, `${API}/organizations/${id}`)).body.classifications[0].taxonomy_term_id;
    const taxonomy = (await getJson(app, `${API}/taxonomies`)).body.contents.find((item: { code: string }) => item.code === 'evil').id;
    const urls = ['/', `/organizations?search=${encodeURIComponent(hostile)}`, '/organizations?search=jerry', `/organizations/${id}`, `/taxonomies/${taxonomy}`, `/taxonomy_terms/${term}`];
    for (const url of urls) {
      const { status, body } = await pageOf(app, url);
      assert.equal(status, 200, url);
      for (const raw of ['<script>alert', '<img src=x', '<iframe', '<b>bold', '<style>body{display', '<i>', 'href="javascript:']) assert.ok(!body.includes(raw), `${url} holds ${raw}`);
    }
    const organization = (await pageOf(app, `/organizations/${id}`)).body;
    assert.ok(organization.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Tom &amp; Jerry&#39;s &quot;Shelter&quot;'));
    assert.ok(organization.includes('A &amp; B &lt;style&gt;'));
    assert.ok(readable(organization).includes('javascript:alert(3)'), 'the value is shown, as text');
    const results = (await pageOf(app, '/organizations?search=jerry')).body;
    assert.ok(results.includes('Tom &amp; Jerry'), 'found and listed escaped');
    assert.ok((await pageOf(app, `/taxonomy_terms/${term}`)).body.includes('&lt;/a&gt;&lt;script&gt;alert(2)&lt;/script&gt;'));
  });
});
