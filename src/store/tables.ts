/**
 * The tables both stores hold, column for column: a SQLite snapshot (sqlite/schema.ts) is built with
 * them, and a PostgreSQL generation (postgres/generation-schema.ts) is made with them and loaded from
 * that snapshot, column by column, so both serve the very same JSON. Positions are dense and 1-based
 * in each list's order: a page is a range of positions, never an OFFSET scan. Filtered lists of
 * organizations (by term, by taxonomy, by subtree, by tax status) have their own dense positions in
 * the `organization_*` membership tables.
 *
 * An organization's two JSON forms live in tables of their own, apart from each other and from its
 * keys: a list page reads only the listed form, packed densely in position order, so the data a busy
 * server keeps in memory is a fraction of the file. Both are packed (packed-documents.ts): what
 * recurs is kept once in `document_fragments`, and `organization_documents` holds only what the full
 * form adds to the listed one.
 *
 * `dataset_versions` is the line of versions this one was published after, itself last (the highest
 * `sequence`), at most KEPT_VERSIONS (build/history.ts); `removed_organizations` the organizations
 * that those publishes removed, one row each time one stopped being served: since when it had been
 * served without a break (`added_at`), the publish time of the version that no longer held it
 * (`removed_at`) and its line of the changes feed (see http/routes/changes.ts). An organization's
 * `added_at` is likewise the publish time from which the line has served it without a break. The rows
 * of an organization served again are kept (for when it is removed again), so the organizations a
 * version of the line held that are not served now are exactly those not served now with a row whose
 * `added_at` is at or before the version's publish time and whose `removed_at` is after it: at most
 * one row each, as one organization's rows never overlap. `taxonomies_version` is a hash of the
 * taxonomies and terms alone: a client whose version has the same one has them all as they are.
 */

/**
 * The layout of both stores: a server reads only a snapshot or generation of this format, and a new
 * layout (of either store) means a new format and an import. 12 made both from this one list; 13 added
 * `added_at`, so that the changes feed removes only what a client's version held, and a check of
 * every served JSON document (`<column>_crc`, see document-check.ts); 14 packed organizations'
 * documents (`document_fragments`) and made their times `instant`s. The text indexes and the
 * vocabulary hold the tokens of search-text.ts, so a change to them is a new format too: 15 keeps
 * apart words Porter stemming merged with a different word (humane is no longer human, maine main,
 * are AR; KEPT_APART), which a server of 14 would search with other tokens than its snapshot holds.
 */
export const STORE_FORMAT = 15;

/**
 * The oldest format whose organizations, `dataset_versions` and `removed_organizations` are as now, so
 * that an import over a live dataset of it carries its history on: clients of the changes feed keep
 * their place across an upgrade.
 */
export const HISTORY_SINCE_FORMAT = 10;

/**
 * The oldest format with `added_at` (see above). Of a live dataset of an older format, every
 * organization and every removed one is taken as served since the oldest version of its line, as
 * the servers of that format took them: removals of those publishes may still be sent to a client
 * that never held them (harmless: it deletes nothing) until they drop out of the line.
 */
export const ADDED_AT_SINCE_FORMAT = 13;

/**
 * How many versions a snapshot names in its line (itself included), at most: clients holding any of
 * them can ask for the changes since. A publish a day keeps a month; each kept version costs one row,
 * and each organization removed in that time one more, while they are fewer than the organizations
 * served (else the line is cut shorter: see dropVersionsBeyondBound in build/history.ts).
 */
export const KEPT_VERSIONS = 30;

/**
 * `ordered text` is text that is compared or sorted (ids, codes, instants, words): byte order in both
 * stores (SQLite's default; "C" in PostgreSQL). An `instant` is milliseconds since 1970 UTC (see
 * storedInstant): 6 bytes a row in SQLite where its ISO 8601 text took 24.
 */
export type ColumnType = 'integer' | 'optional integer' | 'text' | 'ordered text' | 'instant';

/** An ISO 8601 instant (as served, to the millisecond) as an `instant` column holds it. */
export const storedInstant = (iso: string): number => Date.parse(iso);

/**
 * An `instant` column's value as served: from a number (SQLite), a string of digits (PostgreSQL's
 * bigint), or the ISO text that formats before 14 kept.
 */
export function servedInstant(value: number | bigint | string): string {
  if (typeof value === 'string' && !/^-?\d+$/.test(value)) return value;
  return new Date(Number(value)).toISOString();
}

export interface TableIndex {
  name: string;
  columns: readonly string[];
  unique: boolean;
}

export interface Table {
  columns: Readonly<Record<string, ColumnType>>;
  primaryKey: readonly string[];
  /** Built after the bulk load, which is faster than maintaining them row by row. */
  indexes: readonly TableIndex[];
}

const unique = (name: string, ...columns: string[]): TableIndex => ({ name, columns, unique: true });
const index = (name: string, ...columns: string[]): TableIndex => ({ name, columns, unique: false });

/** The membership lists, each with what it groups organizations by. */
export const MEMBERSHIP_GROUPS = { organization_terms: 'term', organization_taxonomies: 'taxonomy', organization_subtrees: 'subtree', organization_tax_statuses: 'tax_status' } as const;

/** A membership list: the organizations of one group (a term, a taxonomy, …) at dense positions. */
const membership = (table: keyof typeof MEMBERSHIP_GROUPS): Table => {
  const group = MEMBERSHIP_GROUPS[table];
  return {
    columns: { [`${group}_position`]: 'integer', [`position_in_${group}`]: 'integer', organization_position: 'integer' },
    primaryKey: [`${group}_position`, `position_in_${group}`],
    indexes: [unique(`${table}_member`, `${group}_position`, 'organization_position')],
  };
};

export const TABLES = {
  taxonomies: {
    columns: { position: 'integer', id: 'ordered text', code: 'ordered text', term_count: 'integer', json: 'text', json_crc: 'integer' },
    primaryKey: ['position'],
    indexes: [unique('taxonomies_id', 'id')],
  },
  taxonomy_terms: {
    columns: {
      position: 'integer',
      id: 'ordered text',
      code: 'ordered text',
      taxonomy_position: 'integer',
      position_in_taxonomy: 'integer',
      parent_position: 'optional integer',
      json: 'text',
      json_crc: 'integer',
      detail_json: 'text',
      detail_json_crc: 'integer',
    },
    primaryKey: ['position'],
    indexes: [
      unique('taxonomy_terms_id', 'id'),
      unique('taxonomy_terms_in_taxonomy', 'taxonomy_position', 'position_in_taxonomy'),
      index('taxonomy_terms_code', 'taxonomy_position', 'code'),
      index('taxonomy_terms_by_parent', 'parent_position'),
    ],
  },
  organizations: {
    columns: { position: 'integer', id: 'ordered text', external_id: 'ordered text', content_hash: 'text', modified_at: 'instant', added_at: 'instant' },
    primaryKey: ['position'],
    indexes: [unique('organizations_id', 'id'), unique('organizations_external_id', 'external_id'), index('organizations_modified', 'modified_at')],
  },
  dataset_versions: {
    columns: { sequence: 'integer', version: 'text', published_at: 'ordered text', taxonomies_version: 'text' },
    primaryKey: ['sequence'],
    indexes: [],
  },
  removed_organizations: {
    columns: { position: 'integer', id: 'ordered text', added_at: 'ordered text', removed_at: 'ordered text', json: 'text', json_crc: 'integer' },
    primaryKey: ['position'],
    indexes: [index('removed_organizations_removed_at', 'removed_at')],
  },
  organization_items: { columns: { position: 'integer', json: 'text', json_crc: 'integer' }, primaryKey: ['position'], indexes: [] },
  /** What each organization's full form adds to its listed form (see packed-documents.ts). */
  organization_documents: { columns: { position: 'integer', json: 'text', json_crc: 'integer' }, primaryKey: ['position'], indexes: [] },
  /** The text of each fragment of the packed documents, by number from 0. */
  document_fragments: { columns: { position: 'integer', text: 'text' }, primaryKey: ['position'], indexes: [] },
  organization_terms: membership('organization_terms'),
  organization_taxonomies: membership('organization_taxonomies'),
  organization_subtrees: membership('organization_subtrees'),
  organization_tax_statuses: membership('organization_tax_statuses'),
  tax_statuses: { columns: { position: 'integer', value: 'text', organizations: 'integer' }, primaryKey: ['position'], indexes: [] },
  /**
   * What each organization is counted under in facets (see facets.ts): facet 0 its tax status (a
   * position in `tax_statuses`), facet taxonomy position × 100 + depth the terms it is in at that depth
   * of the taxonomy (the top level is depth 1), its tags and their ancestors; `facet_counts` the same
   * counted over all organizations.
   */
  organization_facets: { columns: { position: 'integer', facet: 'integer', value: 'integer' }, primaryKey: ['position', 'facet', 'value'], indexes: [] },
  facet_counts: { columns: { facet: 'integer', value: 'integer', organizations: 'integer' }, primaryKey: ['facet', 'value'], indexes: [] },
  /** The words of organization names, which searches are corrected and completed to (search-vocabulary.ts). */
  search_vocabulary: { columns: { word: 'ordered text', token: 'ordered text', organizations: 'integer' }, primaryKey: ['word'], indexes: [] },
} as const satisfies Record<string, Table>;

/** The columns of `dataset_versions` as a DatasetVersion (store.ts), oldest first by `sequence`. */
export const HISTORY_COLUMNS = 'version, published_at AS "publishedAt", taxonomies_version AS "taxonomiesVersion"';

/** The lists that can be searched, each with its text index (a table of each store's own kind). */
export const SEARCHED_LISTS = ['organizations', 'taxonomy_terms', 'taxonomies'] as const;
export type SearchedList = (typeof SEARCHED_LISTS)[number];

export type TableName = keyof typeof TABLES;

export const tableNames = Object.keys(TABLES) as TableName[];

export const columnNames = (table: TableName): string[] => Object.keys(TABLES[table].columns);
