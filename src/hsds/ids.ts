import { hash } from 'node:crypto';

/**
 * Every HSDS id this API serves is a UUIDv5 of a name built from the entity kind and native ids,
 * under this fixed namespace. The rule is documented in docs/profile.md ("Ids") so that anyone can recompute an
 * id from a native id; changing either the namespace or a name format changes every id.
 */
export const ID_NAMESPACE = '0cc8344e-a6c2-489d-ba84-27565b7bbff5';

/**
 * A version-5 UUID (RFC 9562, section 5.5): SHA-1 of the namespace's 16 bytes and the name's UTF-8,
 * version and variant bits set. Written over node:crypto's one-shot hash rather than taken from the
 * uuid package: an import derives several ids per organization, and the package's per-call hash
 * object took 6.6 of the bundled import's 52 s; this takes about a fifth of that.
 */
export function uuidV5(namespace: Buffer, name: string): string {
  const hex = hash('sha1', Buffer.concat([namespace, Buffer.from(name, 'utf8')]), 'hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const uuidBytes = (uuid: string): Buffer => Buffer.from(uuid.replaceAll('-', ''), 'hex');

const NAMESPACE_BYTES = uuidBytes(ID_NAMESPACE);

const uuidFor = (name: string): string => uuidV5(NAMESPACE_BYTES, name);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);

/** An id as a source gives it, for matching: a UUID in lower case, anything else as it is. */
export const canonicalId = (value: string): string => (isUuid(value) ? value.toLowerCase() : value);

/** The id served for an id a source gives: a UUID is kept (lower-cased), so ids from an HSDS source survive; any other value derives one. */
export const servedIdOf = (value: string, derive: (value: string) => string): string => (isUuid(value) ? value.toLowerCase() : derive(value));

export const organizationId = (externalId: string): string => servedIdOf(externalId, (id) => uuidFor(`organization:${id}`));

export const taxonomyId = (taxonomyCode: string): string => uuidFor(`taxonomy:${taxonomyCode}`);

export const taxonomyTermId = (taxonomyCode: string, termCode: string): string =>
  uuidFor(`taxonomy_term:${taxonomyCode}:${termCode}`);

/**
 * The id served for a parent term an HSDS package names by an id that is not a UUID and that no term
 * of the package has. Derived from the id, apart from the ids derived from codes, so that it can never
 * name a term of the package whose code is that value.
 */
export const missingTermId = (taxonomyCode: string, id: string): string => uuidFor(`taxonomy_term:${taxonomyCode}:id=${id}`);

export const attributeId = (externalId: string, taxonomyCode: string, termCode: string): string =>
  uuidFor(`attribute:organization:${externalId}:${taxonomyCode}:${termCode}`);

export const organizationIdentifierId = (externalId: string, scheme: string, identifier: string): string =>
  uuidFor(`organization_identifier:${externalId}:${scheme}:${identifier}`);

export const urlId = (externalId: string, url: string): string => uuidFor(`url:organization:${externalId}:${url}`);
