import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { API, startTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { defaultDatasetSample } from '../helpers/default-dataset-sample.ts';
import type { DatasetSample } from '../helpers/default-dataset-sample.ts';
import { describeEndpoint, openReferralUkSummary, validateFeed } from '../helpers/oruk-validator.ts';
import type { EndpointTest, FeedValidationResult } from '../helpers/oruk-validator.ts';

/**
 * Issue 16: the Open Referral UK validator's procedure (our own re-implementation, see
 * test/helpers/oruk-validator.ts) run against a real listening server that serves data nobody in
 * this project wrote: the bundled NTEE and Open Eligibility taxonomies and the IRS file of Wyoming
 * (about 6,000 organizations, 300 pages; 1,066 taxonomy terms, 54 pages), so the middle and last
 * pages are requested. It runs three ways: base URL only (discovery), the official HSDS 3.2.3
 * openapi.json given, and our own openapi_url given; no endpoint may fail in any of them.
 */

/** Where the official 3.2.3 OpenAPI file points every `$ref`. */
const UPSTREAM = 'https://raw.githubusercontent.com/openreferral/specification/3.2/schema/';
const OFFICIAL_OPENAPI = `${UPSTREAM}openapi.json`;
const VENDOR = new URL('../../vendor/hsds-3.2.3/schema/', import.meta.url);

/**
 * A limit of running offline. The compiled service schemas are not vendored (see
 * vendor/hsds-3.2.3/PROVENANCE.md). This API answers /services and /service_at_locations with an
 * always-empty list and 404 for any {id}, so those item schemas are never applied to anything: in
 * their place goes a schema that accepts any object. The list envelope around them (Page, contents)
 * is still the official one.
 */
const ANY_OBJECT_INSTEAD_OF = new Set(['compiled/service.json', 'compiled/service_list.json', 'compiled/service_at_location.json', 'compiled/service_at_location_list.json']);

const readJson = (url: URL): any => JSON.parse(readFileSync(url, 'utf8'));

/** A document's relative `$ref`s made absolute against `base`, so it can be served from another URL. */
function absoluteRefs(node: any, base: string): any {
  if (Array.isArray(node)) return node.map((item) => absoluteRefs(item, base));
  if (node === null || typeof node !== 'object') return node;
  const result: any = {};
  for (const [key, value] of Object.entries(node)) {
    result[key] = key === '$ref' && typeof value === 'string' && !value.startsWith('#') && !/^[a-z]+:/i.test(value) ? new URL(value, base).href : absoluteRefs(value, base);
  }
  return result;
}

describe('the Open Referral UK validator procedure against a running server', () => {
  let sample: DatasetSample;
  let test: TestApp;
  let origin: string;
  let base: string;
  /** How the offline fetch answered each URL other than our server's. */
  const offline = new Map<string, string>();

  /**
   * The validator's fetchDocument on a machine without network: our server's own URLs are fetched
   * for real; the official upstream files come from vendor/hsds-3.2.3; anything else fails.
   */
  async function offlineFetchDocument(url: string): Promise<unknown> {
    if (url.startsWith(`${origin}/`)) {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${url} answered ${response.status}`);
      return response.json();
    }
    if (url.startsWith(UPSTREAM)) {
      const file = url.slice(UPSTREAM.length);
      if (file === 'compiled/organization.json') {
        // Not vendored (3.5 MB, nesting services); PROVENANCE says to use organization.json, which has every organization field.
        offline.set(url, 'organization.json (refs made absolute)');
        return absoluteRefs(readJson(new URL('organization.json', VENDOR)), `${UPSTREAM}organization.json`);
      }
      if (ANY_OBJECT_INSTEAD_OF.has(file)) {
        offline.set(url, 'any object (not vendored; never applied: /services and /service_at_locations are always empty)');
        return { type: 'object' };
      }
      const local = new URL(file, VENDOR);
      if (/^[\w/]+\.json$/.test(file) && existsSync(fileURLToPath(local))) {
        offline.set(url, `vendor/hsds-3.2.3/schema/${file}`);
        return readJson(local);
      }
    }
    throw new Error(`Offline: no local copy of ${url}`);
  }

  before(async () => {
    sample = await defaultDatasetSample();
    test = await startTestApp(sample.input);
    await test.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
    base = `${origin}${API}`;
  });
  after(async () => {
    await test?.close();
    sample?.remove();
  });

  const report = (t: TestContext, result: FeedValidationResult): void => {
    t.diagnostic(`spec ${result.specUrl} (${result.discoveryReason}); isValid=${result.isValid}; ${JSON.stringify(result.summary)}`);
    for (const message of result.specification?.messages ?? []) t.diagnostic(`spec: ${message.severity} ${message.code} at '${message.path}': ${message.message}`);
    const errors31 = result.specification?.openApi31.errors ?? [];
    for (const message of errors31.slice(0, 5)) t.diagnostic(`spec against the OpenAPI 3.1 schema: ${message.message}`);
    if (errors31.length > 5) t.diagnostic(`spec against the OpenAPI 3.1 schema: … and ${errors31.length - 5} more`);
    for (const notification of result.notifications) t.diagnostic(`notification: ${notification}`);
    for (const endpoint of result.endpoints) t.diagnostic(describeEndpoint(endpoint));
  };

  const find = (result: FeedValidationResult, path: string): EndpointTest => {
    const endpoint = result.endpoints.find((candidate) => candidate.method === 'GET' && candidate.path === path);
    assert.ok(endpoint, `GET ${path} was tested`);
    return endpoint;
  };

  /** The pages the procedure must have asked for, from the list's own total_pages. */
  async function expectedPages(list: string): Promise<number[]> {
    const { total_pages: total } = (await (await fetch(`${base}/${list}?page=1`)).json()) as { total_pages: number };
    return total > 2 ? [1, Math.trunc(total / 2), total] : total > 1 ? [1, total] : [1];
  }

  /** No failed endpoint, and not a vacuous pass: the endpoints that must have been tested were, with every answer schema-checked. */
  async function assertPassedThoroughly(result: FeedValidationResult): Promise<void> {
    assert.deepEqual(result.notifications, []);
    assert.equal(result.isValid, true);
    // As the Open Referral UK format reports it: valid, and no failure in either suite (Level 2 holds the optional endpoints).
    const uk = openReferralUkSummary(result);
    assert.equal(uk.isValid, true);
    assert.equal(uk.testSuites.length, 2);
    for (const suite of uk.testSuites) assert.deepEqual(suite.endpoints.filter((endpoint) => endpoint.status === 'FailedValidation').map(describeEndpoint), [], suite.name);
    const failed = result.endpoints.filter((endpoint) => endpoint.status === 'FailedValidation' || endpoint.status === 'Error');
    assert.deepEqual(failed.map(describeEndpoint), []);
    for (const endpoint of result.endpoints) {
      for (const request of endpoint.requests) assert.equal(request.validationException, undefined, `${request.url}: ${request.validationException}`);
    }

    const root = find(result, '/');
    assert.equal(root.status, 'PassedValidation');
    assert.deepEqual(
      root.requests.map((request) => [request.url, request.status, request.schemaApplied, request.isValid]),
      [[`${base}/`, 200, true, true]],
    );

    for (const list of ['organizations', 'taxonomies', 'taxonomy_terms']) {
      const collection = find(result, `/${list}`);
      const pages = await expectedPages(list);
      if (list !== 'taxonomies') assert.equal(pages.length, 3, `${list} has more than 2 pages`);
      assert.equal(collection.status, 'PassedValidation', describeEndpoint(collection));
      assert.deepEqual(
        collection.requests.map((request) => [request.url, request.status, request.schemaApplied, request.isValid]),
        pages.map((page) => [`${base}/${list}?page=${page}`, 200, true, true]),
      );
      const firstPage = (await (await fetch(`${base}/${list}?page=1`)).json()) as { contents: { id: string }[] };
      const single = find(result, `/${list}/{id}`);
      assert.equal(single.status, 'PassedValidation', describeEndpoint(single));
      // Ids come from page 1 only: 10 at random when it has more (20 organizations or terms; 3 taxonomies).
      assert.equal(single.idsTested.length, Math.min(10, firstPage.contents.length));
      assert.equal(new Set(single.idsTested).size, single.idsTested.length);
      for (const id of single.idsTested) assert.ok(firstPage.contents.some((item) => item.id === id), `${id} is on page 1 of ${list}`);
      assert.deepEqual(
        single.requests.map((request) => [request.url, request.status, request.schemaApplied, request.isValid]),
        single.idsTested.map((id) => [`${base}/${list}/${id}`, 200, true, true]),
      );
    }
    assert.equal(find(result, '/organizations').requests.length, 3);
    assert.equal(find(result, '/organizations/{id}').idsTested.length, 10);
    assert.equal(find(result, '/taxonomy_terms/{id}').idsTested.length, 10);
  }

  /** Our own OpenAPI document: the spec checks find nothing, and it is valid against the OpenAPI 3.1 schema. */
  function assertOwnSpecification(result: FeedValidationResult): void {
    const specification = result.specification!;
    assert.deepEqual(specification.messages, []);
    assert.deepEqual(specification.openApi31.errors, []);
    assert.equal(specification.openApi31.isValid, true);
    assert.equal(specification.openApiVersion, '3.1.0');
  }

  const OWN_ENDPOINTS = [
    ['GET', '/', 'PassedValidation'],
    ['GET', '/taxonomies', 'PassedValidation'],
    ['GET', '/taxonomies/{id}', 'PassedValidation'],
    ['GET', '/taxonomy_terms', 'PassedValidation'],
    ['GET', '/taxonomy_terms/{id}', 'PassedValidation'],
    ['GET', '/organizations', 'PassedValidation'],
    ['GET', '/organizations/{id}', 'PassedValidation'],
    ['GET', '/openapi.json', 'PassedValidation'],
    ['GET', '/profile', 'PassedValidation'],
    ['GET', '/changes', 'PassedValidation'],
    // The validator checks a body against the schema of its first application/json media type only;
    // an optional endpoint that answers 200 with none (a ZIP archive) is PassedWithWarnings in the
    // original's own rule (treatOptionalEndpointsAsWarnings, isValid false), which its suites count as passed.
    ['GET', '/datapackage.zip', 'PassedWithWarnings'],
  ];
  const SUITES_PASSED = [
    ['Level 1 Compliance - Basic checks', true],
    ['Level 2 Compliance - Extended checks', true],
  ];
  const statuses = (result: FeedValidationResult) => result.endpoints.map((endpoint) => [endpoint.method, endpoint.path, endpoint.status]);

  it('(a) base URL only: discovery reads openapi_url, because the root version "3.2.3" does not parse as a number', async (t) => {
    const result = await validateFeed({ baseUrl: base, fetchDocument: offlineFetchDocument });
    report(t, result);
    assert.equal(result.discoveryReason, "OpenAPI URL read from '/' endpoint (openapi_url field)");
    assert.equal(result.specUrl, `${base}/openapi.json`);
    assertOwnSpecification(result);
    await assertPassedThoroughly(result);
    assert.deepEqual(statuses(result), OWN_ENDPOINTS);
    assert.deepEqual(openReferralUkSummary(result).testSuites.map((suite) => [suite.name, suite.success]), SUITES_PASSED);
  });

  it('(b) the official HSDS 3.2.3 openapi.json given', async (t) => {
    offline.clear();
    const result = await validateFeed({ baseUrl: base, openApiSchemaUrl: OFFICIAL_OPENAPI, fetchDocument: offlineFetchDocument });
    report(t, result);
    for (const [url, answer] of offline) t.diagnostic(`offline: ${url} → ${answer}`);
    assert.equal(result.discoveryReason, 'Unknown');
    assert.equal(result.specUrl, OFFICIAL_OPENAPI);
    assert.deepEqual(result.specification!.errors, []);
    await assertPassedThoroughly(result);
    // Exactly this, so that a change is noticed: the services lists are empty (a warning, no ids), so their {id} paths are not tested.
    assert.deepEqual(statuses(result), [
      ['GET', '/', 'PassedValidation'],
      ['GET', '/services', 'PassedWithWarnings'],
      ['GET', '/services/{id}', 'NotTested'],
      ['GET', '/taxonomies', 'PassedValidation'],
      ['GET', '/taxonomies/{id}', 'PassedValidation'],
      ['GET', '/taxonomy_terms', 'PassedValidation'],
      ['GET', '/taxonomy_terms/{id}', 'PassedValidation'],
      ['GET', '/organizations', 'PassedValidation'],
      ['GET', '/organizations/{id}', 'PassedValidation'],
      ['GET', '/service_at_locations', 'PassedWithWarnings'],
      ['GET', '/service_at_locations/{id}', 'NotTested'],
    ]);
    // Each suite holds one services {id} path left NotTested (no ids in an empty list), so neither counts as a success; nothing failed.
    assert.deepEqual(
      openReferralUkSummary(result).testSuites.map((suite) => [suite.name, suite.success, suite.endpoints.filter((endpoint) => endpoint.status !== 'PassedValidation' && endpoint.status !== 'PassedWithWarnings').map((endpoint) => endpoint.path)]),
      [
        ['Level 1 Compliance - Basic checks', false, ['/services/{id}']],
        ['Level 2 Compliance - Extended checks', false, ['/service_at_locations/{id}']],
      ],
    );
    for (const list of ['services', 'service_at_locations']) {
      const collection = find(result, `/${list}`);
      assert.deepEqual(
        collection.requests.map((request) => [request.url, request.status, request.schemaApplied, request.isValid]),
        // Valid against the envelope, then marked not valid by the empty-feed rule.
        [[`${base}/${list}?page=1`, 200, true, false]],
      );
      assert.deepEqual(
        collection.messages.map((message) => message.code),
        ['EMPTY_FEED_WARNING'],
      );
      const single = find(result, `/${list}/{id}`);
      assert.equal(single.tested, false);
      assert.deepEqual(
        single.messages.map((message) => message.code),
        ['NO_IDS_AVAILABLE'],
      );
    }
    assert.equal(find(result, '/services').optional, false);
    assert.equal(find(result, '/organizations').optional, true);
    // Only the files named above came from somewhere other than vendor/ as they are.
    assert.equal(offline.get(`${UPSTREAM}compiled/organization.json`), 'organization.json (refs made absolute)');
  });

  it('(c) our own openapi_url given', async (t) => {
    const { openapi_url: openApiUrl } = (await (await fetch(base)).json()) as { openapi_url: string };
    const result = await validateFeed({ baseUrl: base, openApiSchemaUrl: openApiUrl, fetchDocument: offlineFetchDocument });
    report(t, result);
    assert.equal(result.discoveryReason, 'Unknown');
    assert.equal(result.specUrl, `${base}/openapi.json`);
    assertOwnSpecification(result);
    await assertPassedThoroughly(result);
    assert.deepEqual(statuses(result), OWN_ENDPOINTS);
    assert.deepEqual(openReferralUkSummary(result).testSuites.map((suite) => [suite.name, suite.success]), SUITES_PASSED);
  });

  it('the offline fetch fails loudly for anything it has no copy of', async () => {
    await assert.rejects(offlineFetchDocument(`${UPSTREAM}compiled/service_area.json`), /no local copy/);
    await assert.rejects(offlineFetchDocument(`${UPSTREAM}../README.md`), /no local copy/);
    await assert.rejects(offlineFetchDocument('https://example.org/schema.json'), /no local copy/);
    const result = await validateFeed({ baseUrl: base, openApiSchemaUrl: 'https://example.org/openapi.json', fetchDocument: offlineFetchDocument });
    assert.equal(result.isValid, false);
    assert.match(result.notifications[0]!, /^Unable to get or resolve the OpenAPI specification from https:\/\/example\.org\/openapi\.json\. Offline/);
    assert.deepEqual(result.endpoints, []);
  });
});
