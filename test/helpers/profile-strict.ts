import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { _, Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { API_PREFIX } from '../../src/http/schemas.ts';

/**
 * The profile's own schemas, as served, held closed: every object schema that lists `properties` is
 * given `unevaluatedProperties: false`, so a field the profile does not declare fails, where HSDS's
 * schemas (and so the official validators) let any extra field through. Each answer of the API is
 * checked against the 200 response schema its OpenAPI document gives for its path.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const standaloneCode = standaloneModule as unknown as (ajv: Ajv, refs: Record<string, string>) => string;
const require = createRequire(import.meta.url);

type Json = any;
type Inject = (options: InjectOptions) => Promise<LightMyRequestResponse>;

const COMBINERS = ['allOf', 'anyOf', 'oneOf'];
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/**
 * `schema` with `unevaluatedProperties: false` on every schema that lists `properties` and says
 * nothing itself of other properties. Not on a direct member of an `allOf`: its siblings declare
 * the rest of the object, so the schema holding the `allOf` is closed instead.
 */
export function closed(schema: Json, inAllOf = false): Json {
  if (Array.isArray(schema)) return schema.map((item) => closed(item));
  if (schema === null || typeof schema !== 'object') return schema;
  const result: Json = {};
  for (const [key, value] of Object.entries<Json>(schema)) {
    if (DATA_KEYWORDS.has(key)) result[key] = value;
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object') result[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, closed(sub)]));
    else if (COMBINERS.includes(key) && Array.isArray(value)) result[key] = value.map((member) => closed(member, key === 'allOf'));
    else result[key] = closed(value);
  }
  const declares = result.properties !== undefined || (Array.isArray(result.allOf) && result.allOf.some((member: Json) => member?.properties !== undefined || member?.$ref !== undefined));
  const open = ['additionalProperties', 'patternProperties', 'unevaluatedProperties'].some((key) => key in result);
  if (declares && !open && !inAllOf) result.unevaluatedProperties = false;
  return result;
}

/** OpenAPI paths as patterns over request paths, each with its 200 JSON response schema. */
interface Operation {
  template: string;
  pattern: RegExp;
}

interface ProfileValidators {
  operations: Operation[];
  validators: Record<string, ValidateFunction>;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The validators of a served profile, compiled once into node_modules/.cache and loaded from there by later test processes. */
function compileValidators(openapi: Json, schemas: Map<string, Json>): ProfileValidators {
  const responseSchemas = new Map<string, Json>();
  for (const [template, item] of Object.entries<Json>(openapi.paths)) {
    const schema = item.get?.responses?.['200']?.content?.['application/json']?.schema;
    if (schema === undefined) continue;
    // `#/components/...` cannot resolve outside the OpenAPI document: put the component in place.
    const inlined = JSON.parse(JSON.stringify(schema), (key, value) =>
      value !== null && typeof value === 'object' && typeof value.$ref === 'string' && value.$ref.startsWith('#/components/schemas/')
        ? openapi.components.schemas[value.$ref.slice('#/components/schemas/'.length)]
        : value,
    );
    responseSchemas.set(template, closed(inlined));
  }
  const digest = createHash('sha256').update(readFileSync(new URL(import.meta.url))).update(require('ajv/package.json').version as string);
  digest.update(JSON.stringify([...responseSchemas])).update(JSON.stringify([...schemas]));
  const cached = new URL(`../../node_modules/.cache/hsds-validators/profile-closed-${digest.digest('hex').slice(0, 16)}.cjs`, import.meta.url);
  if (!existsSync(cached)) {
    const ajv = new Ajv2020({ strict: false, allErrors: true, code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } }) as unknown as Ajv;
    addFormats(ajv);
    for (const [url, schema] of schemas) ajv.addSchema(closed(schema), url);
    const refs: Record<string, string> = {};
    for (const [template, schema] of responseSchemas) {
      const key = `urn:hsds-org-api:test:closed-${Object.keys(refs).length}`;
      ajv.addSchema(schema, key);
      refs[template] = key;
    }
    mkdirSync(new URL('.', cached), { recursive: true });
    // Written aside, then renamed: test processes running at once may each make it.
    const partial = new URL(`${cached.href}.${process.pid}`);
    writeFileSync(partial, standaloneCode(ajv, refs));
    renameSync(partial, cached);
  }
  const operations = [...responseSchemas.keys()].map((template) => ({
    template,
    pattern: new RegExp(`^${escapeRegExp(`${API_PREFIX}${template === '/' ? '' : template}`).replace(/\\\{[^}]+\\\}/g, '[^/]+')}/?$`),
  }));
  return { operations, validators: require(cached.pathname) as Record<string, ValidateFunction> };
}

const built = new Map<string, ProfileValidators>();

/** The closed validators of the profile an app serves, read through `inject` (the app's own, unchecked). */
export async function profileValidators(inject: Inject): Promise<ProfileValidators> {
  let requests = 0;
  const get = async (url: string): Promise<Json> => {
    // Each from an address of its own (TEST-NET-2), so as not to spend a rate limit the test is counting.
    requests += 1;
    const response = await inject({ url, headers: { host: 'localhost' }, remoteAddress: `198.51.100.${requests}` });
    if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
    return JSON.parse(response.body);
  };
  const openapi = await get(`${API_PREFIX}/openapi.json`);
  const key = JSON.stringify(openapi);
  let validators = built.get(key);
  if (validators === undefined) {
    const profile = await get(`${API_PREFIX}/profile`);
    const schemas = new Map<string, Json>();
    for (const [file, url] of Object.entries<string>(profile.schema)) if (file !== 'openapi.json') schemas.set(url, await get(url.slice(url.indexOf(`${API_PREFIX}/`))));
    validators = compileValidators(openapi, schemas);
    built.set(key, validators);
  }
  return validators;
}

/** The 200 response schema's validator for a request path, if the OpenAPI document has one. */
export function validatorForPath(validators: ProfileValidators, path: string): ValidateFunction | undefined {
  const operation = validators.operations.find((candidate) => candidate.pattern.test(path));
  return operation === undefined ? undefined : validators.validators[operation.template];
}
