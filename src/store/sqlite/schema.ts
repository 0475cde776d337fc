import { SEARCHED_LISTS, TABLES, tableNames } from '../tables.ts';
import type { ColumnType, SearchedList, TableName } from '../tables.ts';

/**
 * Layout of one SQLite snapshot file: the tables both stores hold (../tables.ts), and what SQLite
 * alone keeps beside them: the `dataset` facts, the text indexes and what searches rank by.
 */

/** The oldest format whose `organizations` table is as now, so that an import reads `last_modified` from it. */
export const ORGANIZATIONS_TABLE_SINCE_FORMAT = 5;

/**
 * Larger than SQLite's default 4 KiB: a page of listed organizations is then one or two database
 * pages, and the trees are a level shallower.
 */
export const PAGE_SIZE = 16_384;

/**
 * Below this many organizations a snapshot has SQLite's default pages of 4 KiB: its trees are shallow
 * anyway, and each of its fifty-odd tables and indexes takes at least a page (800 KB at 16 KiB for a
 * dataset of 4 organizations).
 */
const SMALL_DATASET = 10_000;

export const pageSizeFor = (organizations: number): number => (organizations < SMALL_DATASET ? 4096 : PAGE_SIZE);

/**
 * A database file an import is writing: no journal and no syncs (the build syncs the finished snapshot
 * once; an interrupted build is thrown away), and a page cache of `cacheKiB`. Node's SQLite must be
 * opened with `defensive: false` for journal_mode = OFF to take.
 */
export const buildFilePragmas = (schema: string, cacheKiB: number): string =>
  `PRAGMA ${schema}.page_size = ${PAGE_SIZE}; PRAGMA ${schema}.journal_mode = OFF; PRAGMA ${schema}.synchronous = OFF; PRAGMA ${schema}.cache_size = -${cacheKiB};`;

/**
 * The text indexes hold words already made by store/search-text.ts, one line of words separated by
 * spaces per column, so the ascii tokenizer only splits at the spaces. `title` is an item's name (and
 * alternate name, or code); `body` its description. Searches match words in either; titles rank first.
 * The rowids of `organizations_text` are search ranks (see organization_search), those of the others
 * list positions.
 *
 * `organization_search` gives each organization's search rank (by the number of tokens of its name,
 * then position) and what search-ranking.ts ranks its matches by (see Candidate there): its name's and
 * alternate name's words, and the terms it is classified under.
 */
const FULL_TEXT = "title, body, content='', tokenize='ascii'";

const SQLITE_TYPES: Record<ColumnType, string> = { integer: 'INTEGER NOT NULL', 'optional integer': 'INTEGER', text: 'TEXT NOT NULL', 'ordered text': 'TEXT NOT NULL', instant: 'BIGINT NOT NULL' };

/** A shared table as SQLite holds it: keyed by its rowid when its key is one integer, else WITHOUT ROWID. */
const createTable = (name: TableName): string => {
  const { columns, primaryKey } = TABLES[name];
  const [first, ...rest] = primaryKey;
  const byRowid = rest.length === 0 && columns[first as keyof typeof columns] === 'integer';
  const definitions = Object.entries(columns).map(([column, type]) => (byRowid && column === first ? `${column} INTEGER PRIMARY KEY` : `${column} ${SQLITE_TYPES[type]}`));
  if (!byRowid) definitions.push(`PRIMARY KEY (${primaryKey.join(', ')})`);
  return `CREATE TABLE ${name} (${definitions.join(', ')})${byRowid ? '' : ' WITHOUT ROWID'};`;
};

export const HISTORY_TABLES = (['dataset_versions', 'removed_organizations'] as const).map(createTable).join('\n');

/**
 * The organizations' ranked text index, which an import may build in a file of its own, on another
 * thread, and copy in: organizationIndexStored names the tables that hold it, the text index's own
 * included (see build/search-index.ts).
 */
const ORGANIZATION_INDEX_TABLES = `
  CREATE TABLE organization_word_counts (word TEXT PRIMARY KEY, organizations INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE organization_search (rank INTEGER PRIMARY KEY, position INTEGER NOT NULL, names TEXT NOT NULL);
  CREATE VIRTUAL TABLE organizations_text USING fts5(${FULL_TEXT});
`;

export const createOrganizationIndexTables = (keepSearchText: boolean): string =>
  `${ORGANIZATION_INDEX_TABLES}${keepSearchText ? searchTextTable('organizations') : ''}`;

export const organizationIndexStored = (keepSearchText: boolean): string[] => [
  'organization_word_counts',
  'organization_search',
  ...['data', 'idx', 'docsize', 'config'].map((shadow) => `organizations_text_${shadow}`),
  ...(keepSearchText ? ['organizations_search_text'] : []),
];

export const CREATE_TABLES = `
  CREATE TABLE dataset (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  ${tableNames.map(createTable).join('\n  ')}
  ${ORGANIZATION_INDEX_TABLES}
  CREATE VIRTUAL TABLE taxonomy_terms_text USING fts5(${FULL_TEXT});
  CREATE VIRTUAL TABLE taxonomies_text USING fts5(${FULL_TEXT});
`;

/**
 * Only in a snapshot built to be loaded elsewhere (BuildOptions.keepSearchText): the words of each
 * item as indexed, which a contentless text index cannot give back.
 */
const searchTextTable = (list: SearchedList): string => `CREATE TABLE ${list}_search_text (position INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL);`;

export const CREATE_SEARCH_TEXT_TABLES = SEARCHED_LISTS.map(searchTextTable).join('\n');

/**
 * Run after the bulk load: each text index is merged into one segment (about a second at 2,000,000
 * organizations), so a search reads one list per word; a count of 600,000 matches went from 23 to 16 ms.
 */
export const optimizeTextIndex = (list: SearchedList): string => `INSERT INTO ${list}_text (${list}_text) VALUES ('optimize');`;

/**
 * How many organizations hold each word, read off the merged text index: the total of a one-word
 * search without counting its matches (617,267 for `inc`: 16 to 30 ms to count).
 */
export const FILL_WORD_COUNTS = `
  CREATE VIRTUAL TABLE temp.organizations_vocabulary USING fts5vocab(main, organizations_text, row);
  INSERT INTO organization_word_counts (word, organizations) SELECT term, doc FROM temp.organizations_vocabulary;
  DROP TABLE temp.organizations_vocabulary;
`;

/** The shared tables' indexes (see ../tables.ts). */
export const CREATE_INDEXES = tableNames
  .flatMap((table) => TABLES[table].indexes.map((index) => `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${index.name} ON ${table} (${index.columns.join(', ')});`))
  .join('\n');

/** Keys of the `dataset` table. */
export const DatasetKey = {
  format: 'format',
  version: 'version',
  publishedAt: 'published_at',
  /** Counted at build, so that opening a snapshot reads no table through. */
  organizations: 'organizations',
  taxonomyTerms: 'taxonomy_terms',
} as const;
