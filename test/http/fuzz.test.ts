import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { organizationId, taxonomyTermId } from '../../src/hsds/ids.ts';
import { API, useTestApp } from '../helpers/app.ts';

/**
 * Property tests over routing and query parsing: whatever the path, query and headers, the answer
 * is never a 5xx; it is a problem+json 4xx (or, from a page for people, an HTML page), or a success
 * whose JSON body reads.
 */

const SEGMENTS = ['api', 'hsds', 'v3', 'organizations', 'taxonomies', 'taxonomy_terms', 'docs', 'openapi.json', 'profile', '', '.', '..'];
const IDS = [organizationId('NAT-001'), taxonomyTermId('Colors', 'red'), 'NAT-001', 'colors:red', 'Colors:RED', 'things', 'ntee:P20'];
const PARAMETERS = ['page', 'per_page', 'search', 'taxonomy_term_id', 'taxonomy_id', 'taxonomy', 'parent_id', 'top_only', 'modified_after', 'full', 'format'];
const VALUES = ['1', '0', '-1', '100', '101', '1e1', '9007199254740993', 'true', 'yes', 'ndjson', 'json', '2026-01-01', '2026-02-30T25:00Z', 'shelter', 'food bank', 'colors:red'];

/** Text of any code points, sent percent-encoded (a client cannot send them raw). */
const anyText = fc.string({ unit: 'grapheme', maxLength: 40 }).map(encodeURIComponent);
/** Percent signs that do not decode, and other bytes that are not UTF-8. */
const brokenEncoding = fc.constantFrom('%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '%00', '%2F..%2F', '%25%32%35');
const segment = fc.oneof(fc.constantFrom(...SEGMENTS), fc.constantFrom(...IDS), anyText, brokenEncoding);
const value = fc.oneof(fc.constantFrom(...VALUES), anyText, brokenEncoding, fc.nat().map(String), fc.string({ maxLength: 300 }).map(encodeURIComponent));
const parameter = fc.tuple(fc.oneof(fc.constantFrom(...PARAMETERS), anyText), value).map(([name, text]) => `${name}=${text}`);
const query = fc.array(parameter, { maxLength: 8 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`));
const path = fc.oneof(
  fc.array(segment, { maxLength: 6 }).map((parts) => `${API}/${parts.join('/')}`),
  fc.tuple(fc.constantFrom('organizations', 'taxonomies', 'taxonomy_terms'), fc.option(fc.oneof(fc.constantFrom(...IDS), anyText, brokenEncoding))).map(
    ([list, id]) => `${API}/${list}${id === null ? '' : `/${id}`}`,
  ),
  fc.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
);
const headers = fc.record(
  {
    'accept-encoding': fc.constantFrom('br', 'gzip', 'gzip;q=0, br;q=0', '*', 'identity;q=0', 'br;q=abc', ''),
    'if-none-match': fc.oneof(fc.constantFrom('*', 'W/"x"', '""', '"a", "b"'), fc.string({ maxLength: 30 }).filter((text) => /^[\x20-\x7e]*$/.test(text))),
    'if-modified-since': fc.constantFrom('Sat, 01 Jan 2000 00:00:00 GMT', 'garbage', '0'),
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/x-ndjson'),
    'x-request-id': fc.string({ maxLength: 200 }).filter((text) => /^[\x20-\x7e]*$/.test(text)),
    origin: fc.constantFrom('https://example.org', 'null'),
  },
  { requiredKeys: [] },
);

describe('any request (property tests)', () => {
  const test = useTestApp();

  it('never gets a 5xx: a problem+json 4xx, or a success that reads', async () => {
    await fc.assert(
      fc.asyncProperty(path, query, headers, fc.constantFrom('GET', 'HEAD', 'OPTIONS', 'POST'), async (target, search, sent, method) => {
        const response = await test().app.inject({ method, url: `${target}${search}`, headers: sent });
        const type = String(response.headers['content-type'] ?? '');
        assert.ok(response.statusCode < 500, `${response.statusCode} for ${method} ${target}${search}`);
        if (response.statusCode >= 400 && method !== 'HEAD') {
          // A page for people (at a path outside the API) says what went wrong as a page.
          // The path as the server sees it, dot segments resolved (`/./taxonomy_terms/x` is a term page).
          const received = new URL(`http://localhost${target}`).pathname;
          const page = !received.startsWith(`${API}/`) && /^text\/html/.test(type) && /^\/(organizations|taxonomies|taxonomy_terms)\b/.test(received);
          if (page) return;
          assert.match(type, /^application\/problem\+json/, `${response.statusCode} for ${target}${search}`);
          const problem = response.headers['content-encoding'] === undefined ? JSON.parse(response.body) : undefined;
          if (problem !== undefined) assert.equal(problem.status, response.statusCode);
        } else if (response.statusCode === 200 && method === 'GET' && /^application\/json/.test(type) && response.headers['content-encoding'] === undefined) {
          JSON.parse(response.body);
        }
      }),
      { numRuns: 400 },
    );
  });
});
