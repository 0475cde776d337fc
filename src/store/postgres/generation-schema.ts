import { SEARCHED_LISTS } from '../sqlite/schema.ts';

/**
 * Layout of one generation: the tables of one published dataset version, in a schema of its own,
 * filled from a SQLite snapshot of the same build (so both backends serve the very same JSON) and
 * never changed afterwards. Positions are as in the snapshot (see sqlite/schema.ts): a page is a
 * range of positions, never an OFFSET scan. Text that is compared (ids, codes, instants) uses the
 * "C" collation: byte order, as SQLite compares.
 *
 * A server reads only generations of its own format; a new layout means a new format and a publish.
 */
export const GENERATION_FORMAT = 11;

/**
 * The oldest format whose organizations, `dataset_versions` and `removed_organizations` are as now,
 * so that a publish over a live generation of it carries its history on (format 11 added only the
 * posting lists): clients of the changes feed keep their place across an upgrade.
 */
export const GENERATION_HISTORY_SINCE_FORMAT = 10;

export const generationSchema = (generation: number | string): string => `hsds_g${generation}`;

/** Each table, with the snapshot columns it is loaded from (same names, same order). */
export const GENERATION_TABLES = {
  taxonomies: 'position integer NOT NULL, id text COLLATE "C" NOT NULL, code text COLLATE "C" NOT NULL, term_count integer NOT NULL, json text NOT NULL',
  taxonomy_terms: `position integer NOT NULL, id text COLLATE "C" NOT NULL, code text COLLATE "C" NOT NULL, taxonomy_position integer NOT NULL,
    position_in_taxonomy integer NOT NULL, parent_position integer, json text NOT NULL, detail_json text NOT NULL`,
  organizations: 'position integer NOT NULL, id text COLLATE "C" NOT NULL, external_id text COLLATE "C" NOT NULL, content_hash text NOT NULL, modified_at text COLLATE "C" NOT NULL',
  organization_items: 'position integer NOT NULL, json text NOT NULL',
  organization_documents: 'position integer NOT NULL, json text NOT NULL',
  organization_terms: 'term_position integer NOT NULL, position_in_term integer NOT NULL, organization_position integer NOT NULL',
  organization_taxonomies: 'taxonomy_position integer NOT NULL, position_in_taxonomy integer NOT NULL, organization_position integer NOT NULL',
  organization_subtrees: 'subtree_position integer NOT NULL, position_in_subtree integer NOT NULL, organization_position integer NOT NULL',
  organization_tax_statuses: 'tax_status_position integer NOT NULL, position_in_tax_status integer NOT NULL, organization_position integer NOT NULL',
  tax_statuses: 'position integer NOT NULL, value text NOT NULL, organizations integer NOT NULL',
  organization_facets: 'position integer NOT NULL, facet integer NOT NULL, value integer NOT NULL',
  facet_counts: 'facet integer NOT NULL, value integer NOT NULL, organizations integer NOT NULL',
  search_vocabulary: 'word text COLLATE "C" NOT NULL, token text COLLATE "C" NOT NULL, organizations integer NOT NULL',
  dataset_versions: 'sequence integer NOT NULL, version text NOT NULL, published_at text COLLATE "C" NOT NULL, taxonomies_version text NOT NULL',
  removed_organizations: 'position integer NOT NULL, id text COLLATE "C" NOT NULL, removed_at text COLLATE "C" NOT NULL, json text NOT NULL',
} as const;

/** The length of each membership list (`list` is its table, `key` the term or taxonomy position): totals without a count. */
export const LIST_LENGTHS_TABLE = 'list_lengths (list text NOT NULL, key integer NOT NULL, length integer NOT NULL)';

/** Filled after the load, from the membership tables. */
export const fillListLengths = (schema: string): string =>
  [
    ['organization_terms', 'term'],
    ['organization_taxonomies', 'taxonomy'],
    ['organization_subtrees', 'subtree'],
    ['organization_tax_statuses', 'tax_status'],
  ]
    .map(([table, group]) => `INSERT INTO ${schema}.list_lengths SELECT '${table}', ${group}_position, max(position_in_${group}) FROM ${schema}.${table} GROUP BY ${group}_position;`)
    .join('\n');

export type GenerationTable = keyof typeof GENERATION_TABLES;

/**
 * The text tables: per item, the words of its title and of all its text (title and body) as
 * tsvectors of the words search-text.ts made, matched exactly: no PostgreSQL dictionary touches them.
 */
export const TEXT_TABLE_COLUMNS = 'position integer NOT NULL, title tsvector NOT NULL, words tsvector NOT NULL';

/**
 * The organizations' text table also holds what SQLite keeps in `organization_search` (see
 * sqlite/schema.ts): `position` is the search rank, `organization_position` the list position, `names`
 * what a match is ranked by. The rows a search reads then hold all it needs; joined from a table of
 * their own, the first 1,000 matches of `historical society` (1,872 in all) took 1,000 more index
 * lookups, about half of the query's 12 ms.
 */
export const ORGANIZATIONS_TEXT_COLUMNS = 'position integer NOT NULL, organization_position integer NOT NULL, names text NOT NULL, title tsvector NOT NULL, words tsvector NOT NULL';

/** Per token of the organizations' text index, its posting list (see postings.ts); stored as written, not compressed again. */
export const POSTINGS_TABLE = 'organization_postings';
const POSTINGS_COLUMNS = 'token text COLLATE "C" NOT NULL, organizations integer NOT NULL, postings bytea NOT NULL';

const textColumns = (list: string): string => (list === 'organizations' ? ORGANIZATIONS_TEXT_COLUMNS : TEXT_TABLE_COLUMNS);

export const createTables = (schema: string): string =>
  [
    `CREATE SCHEMA ${schema};`,
    ...Object.entries(GENERATION_TABLES).map(([table, columns]) => `CREATE TABLE ${schema}.${table} (${columns});`),
    ...SEARCHED_LISTS.map((list) => `CREATE TABLE ${schema}.${list}_text (${textColumns(list)});`),
    `CREATE TABLE ${schema}.${LIST_LENGTHS_TABLE};`,
    `CREATE TABLE ${schema}.${POSTINGS_TABLE} (${POSTINGS_COLUMNS});`,
    `ALTER TABLE ${schema}.${POSTINGS_TABLE} ALTER COLUMN postings SET STORAGE EXTERNAL;`,
  ].join('\n');

/** Keys and indexes, built after the bulk load (faster than maintaining them row by row). */
export const createIndexes = (schema: string): string => `
  ALTER TABLE ${schema}.taxonomies ADD PRIMARY KEY (position);
  CREATE UNIQUE INDEX ON ${schema}.taxonomies (id);
  ALTER TABLE ${schema}.taxonomy_terms ADD PRIMARY KEY (position);
  CREATE UNIQUE INDEX ON ${schema}.taxonomy_terms (id);
  CREATE INDEX ON ${schema}.taxonomy_terms (taxonomy_position, code);
  CREATE INDEX ON ${schema}.taxonomy_terms (parent_position);
  ALTER TABLE ${schema}.organizations ADD PRIMARY KEY (position);
  CREATE UNIQUE INDEX ON ${schema}.organizations (id);
  CREATE UNIQUE INDEX ON ${schema}.organizations (external_id);
  CREATE INDEX ON ${schema}.organizations (modified_at);
  ALTER TABLE ${schema}.organization_items ADD PRIMARY KEY (position);
  ALTER TABLE ${schema}.organization_documents ADD PRIMARY KEY (position);
  ALTER TABLE ${schema}.organization_terms ADD PRIMARY KEY (term_position, position_in_term);
  CREATE UNIQUE INDEX ON ${schema}.organization_terms (term_position, organization_position);
  ALTER TABLE ${schema}.organization_taxonomies ADD PRIMARY KEY (taxonomy_position, position_in_taxonomy);
  CREATE UNIQUE INDEX ON ${schema}.organization_taxonomies (taxonomy_position, organization_position);
  ALTER TABLE ${schema}.organization_subtrees ADD PRIMARY KEY (subtree_position, position_in_subtree);
  CREATE UNIQUE INDEX ON ${schema}.organization_subtrees (subtree_position, organization_position);
  ALTER TABLE ${schema}.organization_tax_statuses ADD PRIMARY KEY (tax_status_position, position_in_tax_status);
  CREATE UNIQUE INDEX ON ${schema}.organization_tax_statuses (tax_status_position, organization_position);
  ALTER TABLE ${schema}.tax_statuses ADD PRIMARY KEY (position);
  ALTER TABLE ${schema}.organization_facets ADD PRIMARY KEY (position, facet, value);
  ALTER TABLE ${schema}.facet_counts ADD PRIMARY KEY (facet, value);
  ALTER TABLE ${schema}.dataset_versions ADD PRIMARY KEY (sequence);
  ALTER TABLE ${schema}.removed_organizations ADD PRIMARY KEY (position);
  CREATE INDEX ON ${schema}.removed_organizations (removed_at);
  ALTER TABLE ${schema}.${POSTINGS_TABLE} ADD PRIMARY KEY (token);
  ${SEARCHED_LISTS.map((list) => `ALTER TABLE ${schema}.${list}_text ADD PRIMARY KEY (position); CREATE INDEX ON ${schema}.${list}_text USING gin (words);`).join('\n  ')}
`;
