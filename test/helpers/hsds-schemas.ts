import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { _, Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Options, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { profileValidators, validatorForPath } from './profile-strict.ts';

/**
 * Validators built from the official HSDS JSON schemas and OpenAPI files of both versions this API
 * stays valid against: 3.0 (vendor/hsds-3.0) and 3.2.3 (vendor/hsds-3.2.3). Schemas are registered
 * under the URLs each OpenAPI file uses for them, so its remote $refs resolve locally.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const standaloneCode = standaloneModule as unknown as (ajv: Ajv, refs: Record<string, string>) => string;
const require = createRequire(import.meta.url);

const readJson = (url: URL): any => JSON.parse(readFileSync(url, 'utf8'));

/** The envelope fields this API promises on every page (HSDS itself requires fewer). */
const ENVELOPE = ['total_items', 'total_pages', 'page_number', 'size', 'first_page', 'last_page', 'empty', 'contents'];

export type ValidatorName = 'root' | 'organizationList' | 'taxonomyList' | 'taxonomyTermList' | 'organization' | 'taxonomy' | 'taxonomyTerm';

interface Version {
  name: string;
  validators: Record<ValidatorName, ValidateFunction>;
}

interface VersionSource {
  name: string;
  folder: string;
  /** The URL the OpenAPI file's remote $refs use for the schema folder. */
  upstream: string;
  makeAjv: (options: Options) => Ajv;
}

const SOURCES: VersionSource[] = [
  { name: '3.0', folder: 'hsds-3.0', upstream: 'https://raw.githubusercontent.com/openreferral/specification/3.0/schema/', makeAjv: (options) => new Ajv(options) },
  { name: '3.2.3', folder: 'hsds-3.2.3', upstream: 'https://raw.githubusercontent.com/openreferral/specification/3.2/schema/', makeAjv: (options) => new Ajv2020(options) },
];

const schemaFolder = (source: VersionSource) => new URL(`../../vendor/${source.folder}/schema/`, import.meta.url);
const schemaFiles = (source: VersionSource) => [...readdirSync(schemaFolder(source)).filter((file) => file.endsWith('.json') && file !== 'openapi.json'), 'compiled/organization_list.json'];

/** Compiles a version's validators into the source of a CommonJS module exporting one per ValidatorName. */
function validatorModule(source: VersionSource): string {
  const ajv = source.makeAjv({ strict: false, allErrors: true, code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } });
  addFormats(ajv);
  const vendor = schemaFolder(source);
  for (const file of schemaFiles(source)) {
    const schema = readJson(new URL(file, vendor));
    // 3.2.3's url.json carries an `$id` of its own branch; its relative $refs must resolve here.
    delete schema.$id;
    ajv.addSchema(schema, `${source.upstream}${file}`);
  }
  const openapi = readJson(new URL('openapi.json', vendor));
  const page = openapi.components.schemas.Page;
  // Local `#/components/...` refs cannot resolve outside the OpenAPI document: put the Page schema in place.
  const inlinePage = (schema: any): any => JSON.parse(JSON.stringify(schema).replaceAll('{"$ref":"#/components/schemas/Page"}', JSON.stringify(page)));
  const responseSchema = (path: string): any => inlinePage(openapi.paths[path].get.responses['200'].content['application/json'].schema);
  const own = (name: string) => `urn:hsds-org-api:test:${name}`;
  ajv.addSchema(responseSchema('/'), own('root'));
  for (const [name, path] of [['organizationList', '/organizations'], ['taxonomyList', '/taxonomies'], ['taxonomyTermList', '/taxonomy_terms']]) {
    ajv.addSchema({ allOf: [responseSchema(path!), { required: ENVELOPE }] }, own(name!));
  }
  return standaloneCode(ajv, {
    root: own('root'),
    organizationList: own('organizationList'),
    taxonomyList: own('taxonomyList'),
    taxonomyTermList: own('taxonomyTermList'),
    // The OpenAPI files point at compiled/organization.json (3.4 MB, nesting services; not vendored): the modular schema has every organization field.
    organization: `${source.upstream}organization.json`,
    taxonomy: `${source.upstream}taxonomy.json`,
    taxonomyTerm: `${source.upstream}taxonomy_term.json`,
  });
}

/**
 * A version's validators, compiled once from the official files into node_modules/.cache and loaded
 * from there by every later test process (compiling them took each test file about 0.3 s). The
 * file's name holds a digest of everything it is made from.
 */
function loadVersion(source: VersionSource): Version {
  const digest = createHash('sha256').update(readFileSync(new URL(import.meta.url))).update(JSON.stringify(SOURCES.map((each) => [each.name, each.upstream])));
  for (const file of [...schemaFiles(source), 'openapi.json']) digest.update(file).update(readFileSync(new URL(file, schemaFolder(source))));
  digest.update(require('ajv/package.json').version as string);
  const cached = new URL(`../../node_modules/.cache/hsds-validators/${source.folder}-${digest.digest('hex').slice(0, 16)}.cjs`, import.meta.url);
  if (!existsSync(cached)) {
    mkdirSync(new URL('.', cached), { recursive: true });
    // Written aside, then renamed: test processes running at once may each make it.
    const partial = new URL(`${cached.href}.${process.pid}`);
    writeFileSync(partial, validatorModule(source));
    renameSync(partial, cached);
  }
  return { name: source.name, validators: require(cached.pathname) as Record<ValidatorName, ValidateFunction> };
}

export const HSDS_VERSIONS: Version[] = SOURCES.map(loadVersion);

/** Only for its errorsText(). */
const messages = new Ajv();

/** Throws with the schema errors when `body` does not validate against HSDS 3.0 and HSDS 3.2.3. */
export function assertHsds(name: ValidatorName, body: unknown): void {
  for (const version of HSDS_VERSIONS) assertHsdsVersion(version, name, body);
}

export function assertHsdsVersion(version: Version, name: ValidatorName, body: unknown): void {
  const validate = version.validators[name];
  if (!validate(body)) {
    throw new Error(`${name} does not validate against HSDS ${version.name}: ${messages.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
  }
}

/** Which validator an API path's JSON answer is held to. */
function validatorOfPath(path: string): ValidatorName | undefined {
  const match = /^\/api\/hsds\/v3(?:\/([a-z_]+)(?:\/([^/]+))?)?\/?$/.exec(path);
  if (match === null) return undefined;
  const [, collection, id] = match;
  if (collection === undefined) return 'root';
  const names: Record<string, [ValidatorName, ValidatorName | undefined]> = {
    organizations: ['organizationList', 'organization'],
    taxonomies: ['taxonomyList', 'taxonomy'],
    taxonomy_terms: ['taxonomyTermList', 'taxonomyTerm'],
    // Always empty: the envelope is what there is to check.
    services: ['organizationList', undefined],
    service_at_locations: ['organizationList', undefined],
  };
  return names[collection]?.[id === undefined ? 0 : 1];
}

function decoded(body: Buffer, coding: unknown): string {
  if (coding === 'br') return brotliDecompressSync(body).toString();
  if (coding === 'gzip') return gunzipSync(body).toString();
  return body.toString();
}

/** The path the app receives for an injected URL: inject resolves dot segments (`/taxonomies/..` is the API root). */
function receivedPath(url: string): string {
  const path = url.split('?')[0]!.replace(/^https?:\/\/[^/]+/, '');
  try {
    return new URL(`http://localhost${path}`).pathname;
  } catch {
    return path;
  }
}

/**
 * Holds every JSON document `app.inject` answers with a 200 (whatever the test that asked) to HSDS
 * 3.0 and 3.2.3, and to the profile's own schemas held closed (profile-strict.ts), and returns the
 * list of those that broke any, for the test's end.
 */
export function checkEveryResponse(app: FastifyInstance): string[] {
  const failures: string[] = [];
  const inject = app.inject.bind(app) as (options: InjectOptions) => Promise<LightMyRequestResponse>;
  let profile: Promise<Awaited<ReturnType<typeof profileValidators>>> | undefined;
  const check = async (response: LightMyRequestResponse, url: string) => {
    if (response.statusCode !== 200 || !String(response.headers['content-type']).startsWith('application/json')) return;
    if (response.rawPayload.length === 0) return;
    const path = receivedPath(url);
    const body = JSON.parse(decoded(response.rawPayload, response.headers['content-encoding']));
    const name = validatorOfPath(path);
    try {
      if (name !== undefined) assertHsds(name, body);
    } catch (error) {
      failures.push(`${url}: ${(error as Error).message}`);
    }
    // Answered, so the app can also say what its profile is; asked once per app.
    profile ??= profileValidators(inject);
    const validate = validatorForPath(await profile, path);
    if (validate !== undefined && !validate(body)) {
      failures.push(`${url} has what the profile does not declare: ${messages.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
    }
  };
  Object.assign(app, {
    inject: async (options: InjectOptions | string) => {
      const given = typeof options === 'string' ? { url: options } : options;
      const response = await inject(given);
      if ((given.method ?? 'GET') === 'GET') await check(response, String(given.url ?? given.path ?? '/'));
      return response;
    },
  });
  return failures;
}
