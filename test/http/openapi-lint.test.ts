import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BaseResolver, createConfig, lintFromString } from '@redocly/openapi-core';
import type { NormalizedProblem, RawUniversalConfig } from '@redocly/openapi-core';
import { API, pathOf, useTestApp } from '../helpers/app.ts';

/**
 * Redocly's `recommended` ruleset, with errors for what this API promises: every operation tagged
 * with a declared tag and named by an operationId, a 2xx and a 4xx answer for each, errors as
 * RFC 9457 problem details, and every example valid against its schema.
 */
const LINT_RULES: RawUniversalConfig = {
  extends: ['recommended'],
  rules: {
    'operation-operationId': 'error',
    'operation-tag-defined': 'error',
    'operation-2xx-response': 'error',
    'operation-4xx-response': 'error',
    'operation-4xx-problem-details-rfc7807': 'error',
    'no-invalid-media-type-examples': 'error',
    'no-invalid-schema-examples': 'error',
    'no-invalid-parameter-examples': 'error',
    'no-unused-components': 'error',
    'tag-description': 'error',
    'rule/operation-tagged': {
      subject: { type: 'Operation', property: 'tags' },
      assertions: { defined: true, nonEmpty: true },
      message: 'Every operation must have a tag.',
      severity: 'error',
    },
  },
};

/**
 * Decided exceptions. The meta operations and the package take no input (no parameter, no id), so no
 * GET of them can fail on the client's side: a documented 4xx would be invented.
 */
const EXEMPT = new Set<string>([
  'operation-4xx-response #/paths/~1/get/responses',
  'operation-4xx-response #/paths/~1openapi.json/get/responses',
  'operation-4xx-response #/paths/~1datapackage.zip/get/responses',
]);

/**
 * HSDS's own schema files carry the Frictionless Data keywords its tabular form is generated from
 * (`name`, `constraints`, `core`...), which OpenAPI's Schema Object does not define. The profile
 * compiles those files unchanged, so Redocly's structure rule reports them in every compiled schema;
 * those reports, and only those, are not errors of this document.
 */
const HSDS_TABULAR_KEYWORDS = /^Property `(name|path|datapackage_metadata|constraints|core|tabular_required)` is not expected here\.$/;
const isHsdsTabularKeyword = (problem: NormalizedProblem): boolean =>
  problem.ruleId === 'struct' && HSDS_TABULAR_KEYWORDS.test(problem.message) && problem.location.every((location) => location.source.absoluteRef.includes('/profile/schema/'));

const problemKey = (problem: NormalizedProblem): string => `${problem.ruleId} ${problem.location[0]?.pointer ?? '#/'}`;

const formatProblem = (problem: NormalizedProblem): string => {
  const where = problem.location.map((location) => `${location.pointer ?? '#/'}${location.reportOnKey ? ' (key)' : ''}`).join(', ');
  return `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.source.absoluteRef ?? ''}${where}: ${problem.message}`;
};

const isExampleCarrier = (value: any): boolean =>
  value !== null && typeof value === 'object' && (value.example !== undefined || (value.examples !== undefined && Object.keys(value.examples).length > 0));

/** `#/components/schemas/X` references, followed (the profile's compiled schemas, named by URL, are not). */
function resolve(document: any, value: any): any {
  let seen = 0;
  while (value?.$ref !== undefined && seen++ < 10) {
    const path = String(value.$ref).replace(/^#\//, '').split('/');
    value = path.reduce((node: any, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], document);
  }
  return value;
}

const operationsOf = (document: any): Array<{ name: string; operation: any }> =>
  Object.entries<any>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(method))
      .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
  );

describe('OpenAPI document', () => {
  const test = useTestApp();

  async function servedDocument(): Promise<{ text: string; document: any }> {
    const response = await test().app.inject({ url: `${API}/openapi.json`, headers: { host: 'api.example.org' } });
    assert.equal(response.statusCode, 200);
    return { text: response.body, document: JSON.parse(response.body) };
  }

  let linted: Promise<NormalizedProblem[]> | undefined;
  /** Lints the served document once for the tests below. */
  async function lint(): Promise<{ problems: NormalizedProblem[]; errors: NormalizedProblem[]; report: string }> {
    // The document names the profile's compiled schemas by URL: Redocly fetches them from the app.
    const customFetch = async (url: string) => {
      const response = await test().app.inject({ url: pathOf(url), headers: { host: 'api.example.org' } });
      return new Response(response.body, { status: response.statusCode, headers: { 'content-type': String(response.headers['content-type']) } });
    };
    linted ??= servedDocument().then(async ({ text }) =>
      lintFromString({
        source: text,
        absoluteRef: `http://api.example.org${API}/openapi.json`,
        config: await createConfig(LINT_RULES),
        externalRefResolver: new BaseResolver({ http: { headers: [], customFetch } }),
      }),
    );
    const problems = await linted;
    const report = `Redocly lint of ${API}/openapi.json:\n${problems.filter((problem) => !isHsdsTabularKeyword(problem)).map(formatProblem).join('\n')}`;
    return { problems, errors: problems.filter((problem) => problem.severity === 'error' && !isHsdsTabularKeyword(problem)), report };
  }

  it('passes Redocly lint (recommended, plus tags, operationIds, 4xx answers and valid examples) with no error', async (t) => {
    const { problems, errors, report } = await lint();
    for (const problem of problems.filter((problem) => problem.severity !== 'error')) t.diagnostic(formatProblem(problem));
    const found = new Set(errors.map(problemKey));
    for (const exempt of EXEMPT) assert.ok(found.has(exempt), `exemption no longer needed: ${exempt}`);
    const unexpected = errors.filter((problem) => !EXEMPT.has(problemKey(problem)));
    assert.equal(unexpected.length, 0, report);
  });

  // The issue asks for an example of every path, parameter and response, errors included (their
  // validity against the schemas is Redocly's no-invalid-*-examples, above).
  it('gives an example of every response', async () => {
    const { document } = await servedDocument();
    const missing: string[] = [];
    for (const { name, operation } of operationsOf(document)) {
      for (const [status, value] of Object.entries<any>(operation.responses ?? {})) {
        const response = resolve(document, value);
        const content = Object.entries<any>(response.content ?? {});
        // A response without a body (e.g. 308) is shown by its headers (e.g. Location): each needs an example.
        if (content.length === 0) {
          const headers = Object.entries<any>(response.headers ?? {});
          if (headers.length === 0) missing.push(`${name} ${status} (no body, no header documented)`);
          for (const [header, headerValue] of headers) {
            const definition = resolve(document, headerValue);
            if (!isExampleCarrier(definition) && !isExampleCarrier(resolve(document, definition.schema))) missing.push(`${name} ${status} header ${header}`);
          }
          continue;
        }
        for (const [mediaType, media] of content) {
          if (!isExampleCarrier(media) && !isExampleCarrier(resolve(document, media.schema))) missing.push(`${name} ${status} ${mediaType}`);
        }
      }
    }
    assert.deepEqual(missing, [], `responses without an example:\n${missing.join('\n')}`);
  });

  it('gives an example of every parameter', async () => {
    const { document } = await servedDocument();
    const missing: string[] = [];
    for (const { name, operation } of operationsOf(document)) {
      for (const value of operation.parameters ?? []) {
        const parameter = resolve(document, value);
        if (!isExampleCarrier(parameter) && !isExampleCarrier(resolve(document, parameter.schema))) missing.push(`${name} ${parameter.in} ${parameter.name}`);
      }
    }
    assert.deepEqual(missing, [], `parameters without an example:\n${missing.join('\n')}`);
  });
});
