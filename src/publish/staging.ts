import { isUuid } from '../hsds/ids.ts';

/**
 * Scratch tables of a build, in an attached temporary database: the input as read, in the order read
 * (organizations are indexed by native id once all are in), before it is checked, joined and written
 * in served order.
 */
export const STAGING_TABLES = `
  CREATE TABLE staging.organizations (
    external_id TEXT NOT NULL, sort_key TEXT NOT NULL, published INTEGER NOT NULL, parent TEXT, record TEXT NOT NULL
  );
  CREATE TABLE staging.tags (external_id TEXT NOT NULL, taxonomy TEXT NOT NULL, code TEXT NOT NULL, attribute_id TEXT, label TEXT, link_type TEXT, value TEXT, at TEXT, lenient INTEGER NOT NULL);
  CREATE TABLE staging.urls (external_id TEXT NOT NULL, record TEXT NOT NULL, at TEXT, lenient INTEGER NOT NULL);
  CREATE TABLE staging.identifiers (external_id TEXT NOT NULL, record TEXT NOT NULL, at TEXT, lenient INTEGER NOT NULL);
`;

/** Native ids that are UUIDs name the same organization in any letter case. */
export const stagingKey = (externalId: string): string => (isUuid(externalId) ? externalId.toLowerCase() : externalId);
