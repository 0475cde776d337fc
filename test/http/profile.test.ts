import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Ajv } from 'ajv';
import { API, getJson, useTestApp } from '../helpers/app.ts';

const HOST = { host: 'api.example.org' };
const ORIGIN = 'http://api.example.org/api/hsds/v3';
const PROFILE = `${ORIGIN}/profile`;
const UPSTREAM = 'https://raw.githubusercontent.com/openreferral/specification/3.2/schema/';

const readJson = (path: string): any => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));
const official = (file: string): any => readJson(`vendor/hsds-3.2.3/schema/${file}`);

/** RFC 7386, section 2, written out here so that the test does not lean on the server's library. */
function mergePatch(target: any, patch: any): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** What compiling means, as Open Referral's schema tools do it: merge, then point the official $refs at the profile's schemas. */
const compile = (file: string, patch: any): any =>
  JSON.parse(JSON.stringify(mergePatch(official(file), patch)).replaceAll(`"${UPSTREAM}`, `"${PROFILE}/schema/`));

const HSDS_OPERATIONS: Record<string, string> = {
  '/': 'getAPIMetaInformation',
  '/organizations': 'getPaginatedListOfOrganizations',
  '/organizations/{id}': 'getOrganizationById',
  '/taxonomies': 'getPaginatedListOfTaxonomies',
  '/taxonomies/{id}': 'getTaxonomyById',
  '/taxonomy_terms': 'getPaginatedListOfTaxonomyTerms',
  '/taxonomy_terms/{id}': 'getTaxonomyTermById',
};

describe('the profile', () => {
  const test = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}) => test().app.inject({ url: url.replace(ORIGIN, API), headers: { ...HOST, ...headers } });
  const description = async () => JSON.parse((await get(PROFILE)).body);

  it('is described in JSON at its URI, for programs, naming its patches and compiled schemas', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const response = await get(PROFILE, accept === undefined ? {} : { accept });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      assert.match(String(response.headers.vary), /Accept/);
    }
    const profile = await description();
    assert.equal(profile.hsds_version, '3.2.3');
    assert.equal(profile.uri, PROFILE);
    const patches = readdirSync(new URL('../../profile/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.json'));
    assert.deepEqual(Object.keys(profile.modifications).sort(), ['openapi.json', ...patches].sort());
    for (const [file, url] of Object.entries<string>(profile.modifications)) assert.equal(url, `${PROFILE}/${file}`);
    for (const [file, url] of Object.entries<string>(profile.schema)) assert.equal(url, `${PROFILE}/schema/${file}`);
    assert.ok(['openapi.json', 'organization.json', 'compiled/organization_list.json', 'taxonomy.json', 'taxonomy_term.json'].every((file) => profile.schema[file]));
  });

  it('reads as a page in a browser, as Markdown on request, and refuses an unknown format', async () => {
    const page = await get(PROFILE, { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<h1 id="[^"]+">/);
    // A problem's `type` points at its section.
    assert.match(page.body, /<h3 id="invalid-parameter">/);
    assert.match(page.body, /<h3 id="version-not-kept">/);
    assert.ok(page.body.includes(`<a href="${PROFILE}/schema/organization.json">`));
    // Every link leads somewhere this server answers: the project's other documents are named, not linked.
    const local = [...page.body.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&')).filter((href) => !href.startsWith('#') && !href.startsWith('data:') && !/^https?:/.test(href.replace(ORIGIN, '')));
    assert.ok(local.length > 10, 'the page links the profile\'s files');
    for (const href of local) assert.equal((await get(href)).statusCode, 200, href);
    assert.ok(page.body.includes('<code>docs/consuming.md</code>'));
    assert.equal((await get(`${PROFILE}?format=html`, { accept: 'application/json' })).body, page.body);
    const markdown = await get(`${PROFILE}?format=markdown`);
    assert.match(String(markdown.headers['content-type']), /^text\/markdown/);
    assert.equal(markdown.body, readFileSync(new URL('../../docs/profile.md', import.meta.url), 'utf8'));
    for (const excluded of ['services', 'locations', 'schedules', 'contacts', 'geocoordinates']) assert.match(markdown.body, new RegExp(excluded, 'i'));
    assert.equal((await get(`${PROFILE}?format=pdf`)).statusCode, 400);
  });

  // The same URL in two forms: edge caches and the response cache must never hand one for the other.
  it('keeps the page and the JSON apart in every cache: its own ETag each, Vary: Accept, each form from the response cache', async () => {
    const browser = { accept: 'text/html,*/*;q=0.8' };
    for (let round = 0; round < 2; round++) {
      const json = await get(PROFILE);
      const page = await get(PROFILE, browser);
      assert.match(String(json.headers['content-type']), /^application\/json/);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      for (const response of [json, page]) assert.match(String(response.headers.vary), /^Accept, Accept-Encoding$/);
      assert.notEqual(json.headers.etag, page.headers.etag);
      const revalidated = await get(PROFILE, { ...browser, 'if-none-match': String(page.headers.etag) });
      assert.equal(revalidated.statusCode, 304);
      assert.equal((await get(PROFILE, { 'if-none-match': String(page.headers.etag) })).statusCode, 200);
    }
  });

  it('serves each hand-written patch as it is in profile/, and no file it does not have', async () => {
    for (const file of Object.keys((await description()).modifications).filter((file) => file !== 'openapi.json')) {
      assert.deepEqual(JSON.parse((await get(`${PROFILE}/${file}`)).body), readJson(`profile/${file}`), file);
    }
    const missing = await get(`${PROFILE}/service.json`);
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /^application\/problem\+json/);
  });

  // One source of truth: the served OpenAPI document, the patches and the compiled files agree.
  it('compiles to exactly what it serves: merging each patch with the official HSDS 3.2.3 file gives the compiled file and the served OpenAPI', async () => {
    const profile = await description();
    for (const [file, patchUrl] of Object.entries<string>(profile.modifications)) {
      const patch = JSON.parse((await get(patchUrl)).body);
      const served = JSON.parse((await get(profile.schema[file])).body);
      // A compiled schema is known by where it is served: no `$id`, not even the official url.json's.
      const { $id: _id, ...expected } = compile(file, patch);
      assert.deepEqual(served, expected, file);
    }
    const openapi = JSON.parse((await get(`${ORIGIN}/openapi.json`)).body);
    assert.deepEqual(openapi, compile('openapi.json', JSON.parse((await get(`${PROFILE}/openapi.json`)).body)));
    // Every compiled schema not patched is the official file, $refs pointed at the profile.
    for (const file of Object.keys(profile.schema).filter((file) => !profile.modifications[file])) {
      const { $id: _id, ...expected } = compile(file, {});
      assert.deepEqual(JSON.parse((await get(profile.schema[file])).body), expected, file);
    }
  });

  it('removes every HSDS path outside it, and declares what it adds', async () => {
    const patch = JSON.parse((await get(`${PROFILE}/openapi.json`)).body);
    for (const path of ['/services', '/services/{id}', '/service_at_locations', '/service_at_locations/{id}']) assert.equal(patch.paths[path], null, path);
    // POST searches are not served either.
    for (const path of ['/organizations', '/taxonomies', '/taxonomy_terms']) assert.equal(patch.paths[path].post, null, path);
    const organization = JSON.parse((await get(`${PROFILE}/organization.json`)).body);
    for (const field of ['external_identifier', 'classifications', 'last_modified']) assert.equal(organization.properties[field]['x-profile-extension'], true, field);
    for (const field of ['locations', 'contacts', 'phones', 'programs', 'funding', 'metadata']) assert.equal(organization.properties[field], null, field);
    assert.equal(JSON.parse((await get(`${PROFILE}/taxonomy.json`)).body).properties.code['x-profile-extension'], true);
    assert.equal(JSON.parse((await get(`${PROFILE}/taxonomy_term.json`)).body).properties.children_count['x-profile-extension'], true);
  });

  it('is what the served documents are: each validates against the compiled schemas', async () => {
    const profile = await description();
    const ajv = new Ajv2020({ strict: false, allErrors: true }) as unknown as Ajv;
    (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
    for (const [file, url] of Object.entries<string>(profile.schema)) if (file !== 'openapi.json') ajv.addSchema(JSON.parse((await get(url)).body), url);
    const check = (file: string, document: unknown) => {
      const validate = ajv.getSchema(profile.schema[file])!;
      assert.ok(validate(document), `${file}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(document).slice(0, 300)}`);
    };
    const list = async (path: string) => (await getJson(test().app, `${API}${path}`, HOST)).body.contents;
    for (const item of await list('/organizations?per_page=100')) check('compiled/organization_list.json', item);
    for (const item of await list('/organizations?per_page=100&full=true')) check('organization.json', item);
    for (const item of await list('/taxonomies')) check('taxonomy.json', item);
    for (const item of await list('/taxonomy_terms?per_page=100')) check('taxonomy_term.json', item);
    const [term] = await list('/taxonomy_terms?per_page=1');
    check('taxonomy_term.json', (await getJson(test().app, `${API}/taxonomy_terms/${term.id}`)).body);
    // It can fail: the profile requires what this API always sends.
    assert.throws(() => check('compiled/organization_list.json', { id: '5c4d79d7-cc55-470e-9f1f-8cad074e4892', name: 'n', description: '' }), /external_identifier/);
  });
});

describe('the OpenAPI document', () => {
  const test = useTestApp();

  it('has HSDS 3.2.3\'s shape: its tags, operationIds and paged responses', async () => {
    const { body } = await getJson(test().app, `${API}/openapi.json`, HOST);
    const hsds = official('openapi.json');
    assert.equal(body.openapi, '3.1.0');
    assert.equal(body.jsonSchemaDialect, hsds.jsonSchemaDialect);
    assert.deepEqual(body.tags, hsds.tags);
    assert.deepEqual(body.servers, [{ url: ORIGIN }]);
    assert.deepEqual(body.components.schemas.Page, hsds.components.schemas.Page);
    assert.deepEqual(Object.keys(body.paths).sort(), [...Object.keys(HSDS_OPERATIONS), '/openapi.json', '/profile', '/changes', '/datapackage.zip'].sort());
    for (const [path, item] of Object.entries<any>(body.paths)) {
      assert.deepEqual(Object.keys(item), ['get'], path);
      const operation = item.get;
      if (HSDS_OPERATIONS[path] !== undefined) {
        assert.equal(operation.operationId, HSDS_OPERATIONS[path], path);
        assert.deepEqual(operation.tags, hsds.paths[path].get.tags, path);
      } else {
        assert.deepEqual(operation.tags, ['optional'], path);
        assert.equal(operation['x-profile-extension'], true, path);
      }
      const responses = Object.keys(operation.responses);
      // A native id, a taxonomy code or a term's taxonomy:code in place of the UUID: 308 to the canonical URL.
      if (['/organizations/{id}', '/taxonomies/{id}', '/taxonomy_terms/{id}'].includes(path)) assert.deepEqual(responses, ['200', '308', '404'], path);
      else if (path.endsWith('{id}')) assert.deepEqual(responses, ['200', '404'], path);
      else if (path === '/' || path === '/openapi.json') assert.deepEqual(responses, ['200'], path);
      else if (path === '/changes') assert.deepEqual(responses, ['200', '400', '410'], path);
      else if (path === '/datapackage.zip') assert.deepEqual(responses, ['200', '503'], path);
      else assert.deepEqual(responses, ['200', '400'], path);
      for (const code of responses.filter((code) => code >= '400')) assert.ok(operation.responses[code].content['application/problem+json'], `${path} ${code} is a problem`);
    }
    for (const path of ['/organizations', '/taxonomies', '/taxonomy_terms']) {
      const content = body.paths[path].get.responses['200'].content;
      assert.deepEqual(Object.keys(content), ['application/json', 'application/x-ndjson', 'text/csv'], path);
      const [page, rest] = content['application/json'].schema.allOf;
      assert.deepEqual(page, { $ref: '#/components/schemas/Page' }, path);
      assert.ok(rest.required.includes('contents') && rest.properties.contents.type === 'array', path);
      assert.equal(rest.properties.links['x-profile-extension'], true, path);
    }
    // The envelope's additions on the organization list: a spelling suggestion, the categories a search was read as, and the facet counts.
    const organizationPage = body.paths['/organizations'].get.responses['200'].content['application/json'].schema.allOf[1];
    for (const field of ['search_suggestion', 'search_categories', 'facets']) {
      assert.equal(organizationPage.properties[field]['x-profile-extension'], true, field);
      assert.ok(!organizationPage.required.includes(field), `${field} is sent only when there is one`);
    }
    assert.equal(organizationPage.properties.search_suggestion.type, 'string');
    assert.equal(organizationPage.properties.facets.type, 'object');
    assert.deepEqual(organizationPage.properties.search_categories.items.required, ['id', 'code', 'name', 'taxonomy']);
    assert.deepEqual(organizationPage.properties.facets.additionalProperties.items.required, ['count']);
    const parameters = (path: string) => Object.fromEntries(body.paths[path].get.parameters.map((parameter: any) => [parameter.name, parameter]));
    assert.deepEqual(Object.keys(parameters('/organizations')), ['page', 'per_page', 'format', 'search', 'taxonomy_term_id', 'include_descendants', 'taxonomy_id', 'modified_after', 'tax_status', 'facets', 'full']);
    assert.deepEqual(Object.keys(parameters('/taxonomy_terms')), ['page', 'per_page', 'format', 'search', 'taxonomy_id', 'taxonomy', 'parent_id', 'top_only']);
    assert.deepEqual(Object.keys(parameters('/taxonomies')), ['page', 'per_page', 'format', 'search']);
    // What HSDS does not define for the operation is marked, and still optional.
    for (const [path, name] of [['/organizations', 'modified_after'], ['/organizations', 'include_descendants'], ['/organizations', 'tax_status'], ['/organizations', 'facets'], ['/taxonomy_terms', 'taxonomy']] as const) {
      assert.equal(parameters(path)[name].schema['x-profile-extension'], true, name);
      assert.equal(parameters(path)[name].required, false, name);
    }
    assert.equal(parameters('/organizations').search.schema['x-profile-extension'], undefined);
  });
});
