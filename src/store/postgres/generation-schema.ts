import { MEMBERSHIP_GROUPS, SEARCHED_LISTS, TABLES, tableNames } from '../tables.ts';
import type { ColumnType } from '../tables.ts';

/**
 * Layout of one generation: the tables of one published dataset version, in a schema of its own,
 * made from the tables both stores hold (../tables.ts) and loaded from a SQLite snapshot of the same
 * build, column by column; never changed afterwards. Beside them, what PostgreSQL alone keeps: the
 * length of each membership list, the text tables and the posting lists.
 */
export const generationSchema = (generation: number | string): string => `hsds_g${generation}`;

const PG_TYPES: Record<ColumnType, string> = { integer: 'integer NOT NULL', 'optional integer': 'integer', text: 'text NOT NULL', 'ordered text': 'text COLLATE "C" NOT NULL', instant: 'bigint NOT NULL' };

/** The length of each membership list (`list` is its table, `key` the term or taxonomy position): totals without a count. */
const LIST_LENGTHS_TABLE = 'list_lengths (list text NOT NULL, key integer NOT NULL, length integer NOT NULL)';

/** Filled after the load, from the membership tables. */
export const fillListLengths = (schema: string): string =>
  Object.entries(MEMBERSHIP_GROUPS)
    .map(([table, group]) => `INSERT INTO ${schema}.list_lengths SELECT '${table}', ${group}_position, max(position_in_${group}) FROM ${schema}.${table} GROUP BY ${group}_position;`)
    .join('\n');

/**
 * The text tables: per item, the words of its title and of all its text (title and body) as
 * tsvectors of the words search-text.ts made, matched exactly: no PostgreSQL dictionary touches them.
 */
const TEXT_TABLE_COLUMNS = 'position integer NOT NULL, title tsvector NOT NULL, words tsvector NOT NULL';

/**
 * The organizations' text table also holds what SQLite keeps in `organization_search` (see
 * sqlite/schema.ts): `position` is the search rank, `organization_position` the list position, `names`
 * what a match is ranked by. The rows a search reads then hold all it needs; joined from a table of
 * their own, the first 1,000 matches of `historical society` (1,872 in all) took 1,000 more index
 * lookups, about half of the query's 12 ms.
 */
const ORGANIZATIONS_TEXT_COLUMNS = 'position integer NOT NULL, organization_position integer NOT NULL, names text NOT NULL, title tsvector NOT NULL, words tsvector NOT NULL';

/** Per token of the organizations' text index, its posting list (see postings.ts); stored as written, not compressed again. */
export const POSTINGS_TABLE = 'organization_postings';
const POSTINGS_COLUMNS = 'token text COLLATE "C" NOT NULL, organizations integer NOT NULL, postings bytea NOT NULL';

const textColumns = (list: string): string => (list === 'organizations' ? ORGANIZATIONS_TEXT_COLUMNS : TEXT_TABLE_COLUMNS);

export const createTables = (schema: string): string =>
  [
    `CREATE SCHEMA ${schema};`,
    ...tableNames.map((table) => `CREATE TABLE ${schema}.${table} (${Object.entries(TABLES[table].columns).map(([column, type]) => `${column} ${PG_TYPES[type]}`).join(', ')});`),
    ...SEARCHED_LISTS.map((list) => `CREATE TABLE ${schema}.${list}_text (${textColumns(list)});`),
    `CREATE TABLE ${schema}.${LIST_LENGTHS_TABLE};`,
    `CREATE TABLE ${schema}.${POSTINGS_TABLE} (${POSTINGS_COLUMNS});`,
    `ALTER TABLE ${schema}.${POSTINGS_TABLE} ALTER COLUMN postings SET STORAGE EXTERNAL;`,
  ].join('\n');

/** Keys and indexes, built after the bulk load (faster than maintaining them row by row). */
export const createIndexes = (schema: string): string =>
  [
    ...tableNames.flatMap((table) => [
      `ALTER TABLE ${schema}.${table} ADD PRIMARY KEY (${TABLES[table].primaryKey.join(', ')});`,
      ...TABLES[table].indexes.map((index) => `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${index.name} ON ${schema}.${table} (${index.columns.join(', ')});`),
    ]),
    `ALTER TABLE ${schema}.${POSTINGS_TABLE} ADD PRIMARY KEY (token);`,
    ...SEARCHED_LISTS.map((list) => `ALTER TABLE ${schema}.${list}_text ADD PRIMARY KEY (position); CREATE INDEX ON ${schema}.${list}_text USING gin (words);`),
  ].join('\n');
