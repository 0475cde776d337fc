import { readFileSync, readdirSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * Validators built from the official HSDS 3.0 JSON schemas and OpenAPI file (vendor/hsds-3.0).
 * Schemas get the URLs the OpenAPI file uses for them, so its remote $refs resolve locally.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const VENDOR = new URL('../../vendor/hsds-3.0/schema/', import.meta.url);
const UPSTREAM = 'https://raw.githubusercontent.com/openreferral/specification/3.0/schema/';

const readJson = (url: URL): any => JSON.parse(readFileSync(url, 'utf8'));

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
for (const file of readdirSync(VENDOR).filter((name) => name.endsWith('.json') && name !== 'openapi.json')) {
  ajv.addSchema(readJson(new URL(file, VENDOR)), `${UPSTREAM}${file}`);
}
ajv.addSchema(readJson(new URL('compiled/organization_list.json', VENDOR)), `${UPSTREAM}compiled/organization_list.json`);

const openapi = readJson(new URL('openapi.json', VENDOR));
const PAGE = openapi.components.schemas.Page;

function responseSchema(path: string): any {
  return structuredClone(openapi.paths[path].get.responses['200'].content['application/json'].schema);
}

/** A list response: the OpenAPI `allOf: Page` with our items, plus the envelope fields this API promises. */
function listValidator(path: string): ValidateFunction {
  const schema = responseSchema(path);
  schema.allOf = [PAGE];
  schema.required = ['total_items', 'total_pages', 'page_number', 'size', 'first_page', 'last_page', 'empty', 'contents'];
  return ajv.compile(schema);
}

export const validators = {
  root: ajv.compile(responseSchema('/')),
  organizationList: listValidator('/organizations'),
  taxonomyList: listValidator('/taxonomies'),
  taxonomyTermList: listValidator('/taxonomy_terms'),
  // The OpenAPI file points at compiled/organization.json (3.4 MB, not vendored); the modular schema is the same.
  organization: ajv.getSchema(`${UPSTREAM}organization.json`)!,
  taxonomy: ajv.getSchema(`${UPSTREAM}taxonomy.json`)!,
  taxonomyTerm: ajv.getSchema(`${UPSTREAM}taxonomy_term.json`)!,
};

export type ValidatorName = keyof typeof validators;

/** Throws with the schema errors when `body` does not validate. */
export function assertHsds(name: ValidatorName, body: unknown): void {
  const validate = validators[name];
  if (!validate(body)) {
    throw new Error(`${name} does not validate against HSDS 3.0: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
  }
}
