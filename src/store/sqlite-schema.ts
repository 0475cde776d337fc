/**
 * Layout of one SQLite snapshot file. A snapshot holds only what is served: published organizations,
 * each already rendered to its JSON forms, with a dense 1-based `position` in the documented sort
 * order so a page is a range lookup, never an OFFSET scan.
 */
export const SNAPSHOT_FORMAT = 1;

export const CREATE_TABLES = `
  CREATE TABLE dataset (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE taxonomies (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    code TEXT NOT NULL,
    term_count INTEGER NOT NULL,
    json TEXT NOT NULL
  );
  CREATE TABLE taxonomy_terms (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    taxonomy_position INTEGER NOT NULL,
    position_in_taxonomy INTEGER NOT NULL,
    json TEXT NOT NULL,
    detail_json TEXT NOT NULL
  );
  CREATE TABLE organizations (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    json TEXT NOT NULL,
    detail_json TEXT NOT NULL
  );
`;

/** Created after the bulk load, which is faster than maintaining them row by row. */
export const CREATE_INDEXES = `
  CREATE UNIQUE INDEX taxonomies_id ON taxonomies (id);
  CREATE UNIQUE INDEX taxonomy_terms_id ON taxonomy_terms (id);
  CREATE UNIQUE INDEX taxonomy_terms_in_taxonomy ON taxonomy_terms (taxonomy_position, position_in_taxonomy);
  CREATE UNIQUE INDEX organizations_id ON organizations (id);
  CREATE UNIQUE INDEX organizations_external_id ON organizations (external_id);
`;

/** Keys of the `dataset` table. */
export const DatasetKey = {
  format: 'format',
  version: 'version',
  publishedAt: 'published_at',
} as const;
