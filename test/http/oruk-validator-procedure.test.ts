import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { describeEndpoint, discoverFromRoot, discoverOpenApiUrl, formatOneDecimal, paginationInfo, parseDotNetSingle, validateFeed } from '../helpers/oruk-validator.ts';
import type { FeedValidationResult } from '../helpers/oruk-validator.ts';

/**
 * The re-implemented Open Referral UK validator procedure (test/helpers/oruk-validator.ts) on its
 * own: its discovery rule, and that it does fail a feed that breaks the rules, against a throw-away
 * server (not this project's API).
 */

const UK = 'https://openreferraluk.org/specifications/';
const OWN = 'https://feed.example.org/openapi.json';
const VERSION_READ = (version: string) => `Standard version [user: ${version}] read from '/' endpoint`;
const URL_READ = "OpenAPI URL read from '/' endpoint (openapi_url field)";
const NOTHING_FOUND = 'Defaulted to HSDS-UK 1.0 (no version or openapi_url found)';

describe('the discovery rule', () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['"3.0"', { version: '3.0', openapi_url: OWN }, `${UK}3.0/openapi.json`, VERSION_READ('3.0')],
    ['"HSDS-UK-3.0"', { version: 'HSDS-UK-3.0', openapi_url: OWN }, `${UK}3.0/openapi.json`, VERSION_READ('HSDS-UK-3.0')],
    ['"hsds-uk-3.0"', { version: 'hsds-uk-3.0' }, `${UK}3.0/openapi.json`, VERSION_READ('hsds-uk-3.0')],
    ['"v3.1"', { version: 'v3.1', openapi_url: OWN }, `${UK}3.1/openapi.json`, VERSION_READ('v3.1')],
    ['"V3"', { version: 'V3' }, `${UK}3.0/openapi.json`, VERSION_READ('V3')],
    ['the number 3', { version: 3 }, `${UK}3.0/openapi.json`, VERSION_READ('3')],
    ['" 3.00 "', { version: ' 3.00 ' }, `${UK}3.0/openapi.json`, VERSION_READ('3.00')],
    ['"3.2"', { version: '3.2', openapi_url: OWN }, `${UK}3.2/openapi.json`, VERSION_READ('3.2')],
    ['"3,2" (a group separator)', { version: '3,2' }, `${UK}32.0/openapi.json`, VERSION_READ('3,2')],
    ['"3.25" (rounded)', { version: '3.25' }, `${UK}3.3/openapi.json`, VERSION_READ('3.25')],
    ['"3.05" (rounded at float precision)', { version: '3.05' }, `${UK}3.1/openapi.json`, VERSION_READ('3.05')],
    ['"NaN"', { version: 'NaN' }, `${UK}NaN/openapi.json`, VERSION_READ('NaN')],
    ['"3.2.3" with openapi_url', { version: '3.2.3', openapi_url: OWN }, OWN, URL_READ],
    ['"HSDS 3.2.3" with openapi_url', { version: 'HSDS 3.2.3', openapi_url: OWN }, OWN, URL_READ],
    ['"invalid-version-string" with open_api_url', { version: 'invalid-version-string', open_api_url: OWN }, OWN, URL_READ],
    ['"3.2.3" alone', { version: '3.2.3' }, `${UK}1.0/openapi.json`, NOTHING_FOUND],
    ['no version, openapi_url', { openapi_url: OWN }, OWN, URL_READ],
    ['a null version, openapiUrl', { version: null, openapiUrl: OWN }, OWN, URL_READ],
    ['no version and no URL (profile is not read)', { profile: 'https://feed.example.org/profile' }, `${UK}1.0/openapi.json`, NOTHING_FOUND],
    ['an empty openapi_url hiding openapiUrl', { version: '3.2.3', openapi_url: '', openapiUrl: OWN }, `${UK}1.0/openapi.json`, NOTHING_FOUND],
    ['a null openapi_url hiding openapiUrl', { openapi_url: null, openapiUrl: OWN }, `${UK}1.0/openapi.json`, NOTHING_FOUND],
  ];
  for (const [name, root, url, reason] of cases) {
    it(`version ${name}`, () => {
      assert.deepEqual(discoverFromRoot(root as any), { url, reason });
    });
  }

  it('parses and formats numbers as .NET floats do', () => {
    assert.equal(parseDotNetSingle('3.2.3'), undefined);
    assert.equal(parseDotNetSingle('3.'), 3);
    assert.equal(parseDotNetSingle('-1e1'), -10);
    assert.equal(parseDotNetSingle('1,000.5'), 1000.5);
    assert.equal(parseDotNetSingle('3.0 (UK)'), undefined);
    assert.equal(formatOneDecimal(Math.fround(0.05)), '0.1');
    assert.equal(formatOneDecimal(Math.fround(1e20)), '100000000000000000000.0');
    assert.equal(formatOneDecimal(Number.POSITIVE_INFINITY), 'Infinity');
  });
});

/** A throw-away feed: what it serves is set per test. */
describe('the procedure against a throw-away server', () => {
  let server: FastifyInstance;
  let origin: string;
  let broken = true;

  const thing = (n: number) => ({ id: `t${String(n).padStart(2, '0')}`, name: `Thing ${n}` });
  const page = (items: unknown[], number: number, total: number) => ({ total_pages: total, page_number: number, contents: items, ...(broken && number === 1 ? {} : { empty: items.length === 0 }) });
  const okJson = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema } } });
  const listOf = (items: unknown) => okJson({ allOf: [{ $ref: '#/components/schemas/Page' }, { type: 'object', properties: { contents: { type: 'array', items } }, required: ['contents'] }] });
  const spec = () => ({
    openapi: '3.1.0',
    info: { title: 'throw-away feed', version: '1' },
    paths: {
      '/': { get: { tags: ['required'], responses: { '200': okJson({ type: 'object', required: ['version'] }) } } },
      '/things': {
        get: { tags: ['required'], parameters: [{ $ref: '#/components/parameters/page' }], responses: { '200': listOf({ $ref: 'thing.json' }) } },
        post: { tags: ['required'], responses: { '200': okJson({ type: 'object' }) } },
      },
      '/things/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { tags: ['required'], responses: { '200': okJson({ $ref: 'thing.json' }), '404': { description: 'no such thing' } } },
      },
      '/extras': { get: { tags: ['Optional'], responses: { '200': okJson({ type: 'object' }) } } },
      // Required GET, optional DELETE: the path-item check gives the GET's 404 optional treatment (§5.6).
      '/mixed': { get: { tags: ['required'], responses: { '200': okJson({ type: 'object' }) } }, delete: { tags: ['optional'], responses: { '204': { description: 'gone' } } } },
      '/empty': { get: { tags: ['required'], parameters: [{ name: 'page', in: 'query', schema: { type: 'integer' } }], responses: { '200': listOf({ $ref: 'thing.json' }) } } },
    },
    components: {
      schemas: { Page: { type: 'object', properties: { total_pages: { type: 'integer' }, page_number: { type: 'integer' }, empty: { type: 'boolean' } }, required: ['empty'] } },
      parameters: { page: { name: 'page', in: 'query', schema: { type: 'integer' } } },
    },
  });

  before(async () => {
    server = Fastify();
    const root = () => ({ version: 'HSDS 3.2.3', openapi_url: `${origin}/api/openapi.json` });
    server.get('/api', async () => root());
    server.get('/api/', async () => root());
    server.get('/api/openapi.json', async () => spec());
    server.get('/api/openapi-bad-ref.json', async () => ({ ...spec(), paths: { '/': { get: { responses: { '200': okJson({ $ref: 'missing.json' }) } } } } }));
    server.get('/api/thing.json', async () => ({ type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } }));
    server.get<{ Querystring: { page?: string } }>('/api/things', async (request) => {
      const number = Number(request.query.page ?? '1');
      return page(number === 1 ? Array.from({ length: 12 }, (_, i) => thing(i + 1)) : [thing(12 + number)], number, 3);
    });
    server.get<{ Params: { id: string } }>('/api/things/:id', async (request, reply) => {
      const n = Number(request.params.id.slice(1));
      if (broken ? n > 5 : n > 12) return reply.code(404).send({ title: 'Not Found' });
      return thing(n);
    });
    server.get('/api/empty', async () => ({ total_pages: 0, contents: [], empty: true }));
    server.get<{ Params: { name: string } }>('/roots/:name', async (request, reply) => {
      if (request.params.name === 'missing') return reply.code(404).send({});
      if (request.params.name === 'text') return reply.type('text/plain').send('not json');
      if (request.params.name === 'array') return [{ version: '3.0' }];
      return { version: 'HSDS-UK-3.0' };
    });
    await server.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const find = (result: FeedValidationResult, method: string, path: string) => result.endpoints.find((endpoint) => endpoint.method === method && endpoint.path === path)!;

  it('discovers from the base URL, or defaults to HSDS-UK 1.0 when the root cannot be read', async () => {
    assert.deepEqual(await discoverOpenApiUrl(`${origin}/api`), { url: `${origin}/api/openapi.json`, reason: URL_READ });
    assert.deepEqual(await discoverOpenApiUrl(`${origin}/roots/uk`), { url: `${UK}3.0/openapi.json`, reason: VERSION_READ('HSDS-UK-3.0') });
    assert.deepEqual(await discoverOpenApiUrl(`${origin}/roots/missing`), { url: `${UK}1.0/openapi.json`, reason: 'Defaulted to HSDS-UK 1.0 (base URL request failed)' });
    assert.deepEqual(await discoverOpenApiUrl(`${origin}/roots/text`), { url: `${UK}1.0/openapi.json`, reason: 'Defaulted to HSDS-UK 1.0 (failed to parse base URL response)' });
    assert.deepEqual(await discoverOpenApiUrl(`${origin}/roots/array`), { url: `${UK}1.0/openapi.json`, reason: 'Defaulted to HSDS-UK 1.0 (failed to parse base URL response)' });
    assert.deepEqual(await discoverOpenApiUrl('http://127.0.0.1:1/'), { url: `${UK}1.0/openapi.json`, reason: 'Defaulted to HSDS-UK 1.0 (error requesting base URL)' });
  });

  it('fails a feed whose page breaks its schema and whose required {id} path answers 404', async (t) => {
    broken = true;
    // Decreasing keys: the 10 ids with the smallest keys are the last 10, last first.
    let next = 1;
    const result = await validateFeed({ baseUrl: `${origin}/api`, random: () => (next -= 0.01) });
    for (const endpoint of result.endpoints) t.diagnostic(describeEndpoint(endpoint));
    assert.equal(result.discoveryReason, URL_READ);
    assert.equal(result.isValid, false);
    assert.equal(result.summary.failedTests, 2);
    assert.deepEqual(
      result.endpoints.map((endpoint) => [endpoint.method, endpoint.path, endpoint.optional, endpoint.status]),
      [
        ['GET', '/', false, 'PassedValidation'],
        ['GET', '/things', false, 'FailedValidation'],
        ['GET', '/things/{id}', false, 'FailedValidation'],
        ['GET', '/extras', true, 'PassedWithWarnings'],
        ['GET', '/mixed', false, 'PassedWithWarnings'],
        ['GET', '/empty', false, 'PassedWithWarnings'],
      ],
    );
    assert.equal(find(result, 'GET', '/').requests[0]!.url, `${origin}/api/`);

    // total_pages 3: page 1, the middle page 3/2 = 1 (again), the last page.
    const things = find(result, 'GET', '/things');
    assert.deepEqual(
      things.requests.map((request) => request.url),
      [1, 1, 3].map((n) => `${origin}/api/things?page=${n}`),
    );
    assert.deepEqual(
      things.messages.map((message) => [message.code, message.path]),
      // Page 1 and the middle page (page 1 again) both lack `empty`; page 3 has it.
      [
        ['VALIDATION_ERROR', ''],
        ['VALIDATION_ERROR', ''],
      ],
    );
    assert.match(things.messages[0]!.message, /empty/);

    const byId = find(result, 'GET', '/things/{id}');
    assert.deepEqual(byId.idsTested, ['t12', 't11', 't10', 't09', 't08', 't07', 't06', 't05', 't04', 't03']);
    assert.deepEqual(
      byId.requests.map((request) => [request.url.slice(origin.length), request.status]),
      byId.idsTested.map((id) => [`/api/things/${id}`, Number(id.slice(1)) > 5 ? 404 : 200]),
    );
    assert.deepEqual(
      byId.messages.map((message) => message.code),
      Array(7).fill('REQUIRED_ENDPOINT_FAILED'),
    );
    assert.equal(byId.messages[0]!.message, 'Required endpoint GET /things/t12 returned non-success status 404. Expected 2xx status code.');

    assert.deepEqual(
      find(result, 'GET', '/extras').messages.map((message) => message.code),
      ['OPTIONAL_ENDPOINT_NON_SUCCESS'],
    );
    assert.deepEqual(
      find(result, 'GET', '/mixed').messages.map((message) => message.code),
      ['OPTIONAL_ENDPOINT_NON_SUCCESS'],
    );
    assert.deepEqual(
      find(result, 'GET', '/empty').messages.map((message) => message.code),
      ['EMPTY_FEED_WARNING'],
    );
    // POST /things is not a GET and has no parameter: never requested nor reported.
    assert.equal(find(result, 'POST', '/things'), undefined);
  });

  it('passes the same feed once it is fixed, with ids chosen by the default random source', async () => {
    broken = false;
    const result = await validateFeed({ baseUrl: `${origin}/api`, openApiSchemaUrl: `${origin}/api/openapi.json` });
    assert.equal(result.discoveryReason, 'Unknown');
    assert.equal(result.isValid, true);
    assert.equal(find(result, 'GET', '/things').status, 'PassedValidation');
    const byId = find(result, 'GET', '/things/{id}');
    assert.equal(byId.status, 'PassedValidation');
    assert.equal(byId.idsTested.length, 10);
    assert.equal(new Set(byId.idsTested).size, 10);
  });

  it('stops with a notification when a $ref cannot be fetched', async () => {
    const result = await validateFeed({ baseUrl: `${origin}/api`, openApiSchemaUrl: `${origin}/api/openapi-bad-ref.json` });
    assert.equal(result.isValid, false);
    assert.deepEqual(result.endpoints, []);
    assert.match(result.notifications[0]!, /^Unable to get or resolve the OpenAPI specification from http:\/\/127\.0\.0\.1:\d+\/api\/openapi-bad-ref\.json\. .*404/);
  });

  it('reads total_pages and the item count as the original does', () => {
    assert.deepEqual(paginationInfo('{"total_pages":"5","contents":[1]}'), { totalPages: 5, itemCount: 1 });
    assert.deepEqual(paginationInfo('{"meta":{"totalPages":3},"data":[],"size":2}'), { totalPages: 3, itemCount: 2 });
    assert.deepEqual(paginationInfo('{"total_pages":null,"totalPages":4,"items":[1,2]}'), { itemCount: 2 });
    assert.deepEqual(paginationInfo('[1,2,3]'), { itemCount: 3 });
    assert.deepEqual(paginationInfo('<html>'), { itemCount: 0 });
  });
});
