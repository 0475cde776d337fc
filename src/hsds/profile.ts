import { readFileSync, readdirSync } from 'node:fs';
import jsonMergePatch from 'json-merge-patch';
import packageJson from '../../package.json' with { type: 'json' };

/**
 * This API's HSDS profile, as HSDS defines one: JSON Merge Patch (RFC 7386) files named like the
 * official HSDS files they change, and the "compiled" files that merging them with the official ones
 * gives. The schema patches are written by hand (profile/); the OpenAPI patch is what turns the
 * official OpenAPI file into the document generated from this server's routes, so it cannot drift
 * from what is served. Compiling, as Open Referral's schema tools do, also points the official
 * files' $refs at the profile's own compiled schemas.
 */

/** The HSDS release this profile is a profile of; the root object's `version`. */
export const HSDS_VERSION = '3.2.3';

/** The profile's own version: it changes with this software, not with HSDS. */
export const PROFILE_VERSION = packageJson.version;

/** Where the official files' $refs point: the HSDS 3.2 schema folder on GitHub. */
export const UPSTREAM_SCHEMA_BASE = 'https://raw.githubusercontent.com/openreferral/specification/3.2/schema/';

/** The official HSDS 3.2.3 files' home, for people. */
export const UPSTREAM_HOME = 'https://github.com/openreferral/specification/tree/v3.2.3/schema';

const OFFICIAL = new URL('../../vendor/hsds-3.2.3/schema/', import.meta.url);
const PATCHES = new URL('../../profile/', import.meta.url);

type Json = any;

const readJson = (url: URL): Json => JSON.parse(readFileSync(url, 'utf8'));

/** An official HSDS 3.2.3 file, by its path in the schema folder (e.g. `compiled/organization_list.json`). */
export const officialFile = (file: string): Json => readJson(new URL(file, OFFICIAL));

/** The hand-written schema patches, by the path of the file each changes. */
export const schemaPatches: ReadonlyMap<string, Json> = new Map(
  readdirSync(PATCHES, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => [file, readJson(new URL(file, PATCHES))]),
);

export const applyPatch = (target: Json, patch: Json): Json => jsonMergePatch.apply(structuredClone(target), patch);

/** The merge patch that turns `from` into `to` (none: `{}`). */
export const patchBetween = (from: Json, to: Json): Json => jsonMergePatch.generate(from, to) ?? {};

/** A document with every $ref into the official schema folder pointed at `schemaBase` instead. */
export function pointRefsAt(document: Json, schemaBase: string): Json {
  return JSON.parse(JSON.stringify(document), (key, value) =>
    key === '$ref' && typeof value === 'string' && value.startsWith(UPSTREAM_SCHEMA_BASE) ? `${schemaBase}${value.slice(UPSTREAM_SCHEMA_BASE.length)}` : value,
  );
}

/**
 * The official file merged with its patch, its $refs pointed at the compiled schemas. A compiled
 * schema has no `$id`: it is known by the URL it is served at, and its $refs are absolute. Validators
 * such as Open Referral UK's inline every `$ref` of a response schema, so a schema reached twice is
 * copied twice, and an `$id` in it would be declared twice, which JSON Schema engines refuse. (Of the
 * official files only 3.2.3's url.json carries one, naming a branch rather than a release.)
 */
export function compileFile(file: string, patch: Json, schemaBase: string): Json {
  const { $id: _id, ...merged } = pointRefsAt(applyPatch(officialFile(file), patch), schemaBase);
  return merged;
}

/** The $refs of a document that name other files (not `#/...` pointers), resolved against `base`. */
function referencedFiles(document: Json, base: string): string[] {
  const found: string[] = [];
  JSON.stringify(document, (key, value) => {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) found.push(new URL(value.split('#')[0]!, base).href);
    return value;
  });
  return found;
}

/** The OpenAPI document first, then the schemas by name. */
const byFile = (a: string, b: string): number => Number(b === 'openapi.json') - Number(a === 'openapi.json') || a.localeCompare(b);

export interface CompiledProfile {
  /** Every patch, by file: the schema patches and the OpenAPI patch. */
  patches: Map<string, Json>;
  /** Every compiled file, by file: the OpenAPI document and each schema it reaches through $refs. */
  compiled: Map<string, Json>;
}

/**
 * The profile of a server whose generated OpenAPI document is `served`, its schema $refs under
 * `schemaBase`. Compiles the schemas the document reaches, and only those: a file the profile
 * removes (services, locations, metadata...) is neither reached nor served.
 */
export function compileProfile(served: Json, schemaBase: string): CompiledProfile {
  const officialOpenapi = pointRefsAt(officialFile('openapi.json'), schemaBase);
  const patches = new Map<string, Json>([['openapi.json', patchBetween(officialOpenapi, served)], ...[...schemaPatches].sort(([a], [b]) => byFile(a, b))]);
  const compiled = new Map<string, Json>([['openapi.json', applyPatch(officialOpenapi, patches.get('openapi.json'))]]);
  const pending = referencedFiles(served, schemaBase);
  while (pending.length > 0) {
    const url = pending.pop()!;
    if (!url.startsWith(schemaBase)) continue;
    const file = url.slice(schemaBase.length);
    if (compiled.has(file)) continue;
    const schema = compileFile(file, patches.get(file) ?? {}, schemaBase);
    compiled.set(file, schema);
    pending.push(...referencedFiles(schema, url));
  }
  for (const file of schemaPatches.keys()) {
    if (!compiled.has(file)) throw new Error(`profile/${file} patches a file the OpenAPI document does not reach`);
  }
  return { patches, compiled: new Map([...compiled].sort(([a], [b]) => byFile(a, b))) };
}
