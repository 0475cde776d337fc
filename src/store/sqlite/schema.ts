/**
 * Layout of one SQLite snapshot file. A snapshot holds only what is served: published organizations,
 * each already rendered to its JSON forms, with a dense 1-based `position` in the documented sort
 * order so a page is a range lookup, never an OFFSET scan. Filtered lists of organizations (by term,
 * by taxonomy) have their own dense positions in the `organization_*` membership tables.
 *
 * An organization's two JSON forms live in tables of their own, apart from each other and from its
 * keys: a list page reads only the listed form, packed densely in position order, so the data a busy
 * server keeps in memory is a fraction of the file.
 */
export const SNAPSHOT_FORMAT = 10;

/** The oldest format whose `organizations` table is as now, so that an import reads `last_modified` from it. */
export const ORGANIZATIONS_TABLE_SINCE_FORMAT = 5;

/** The oldest format with `dataset_versions` and `removed_organizations`, which an import carries on. */
export const HISTORY_SINCE_FORMAT = 10;

/**
 * How many versions a snapshot names in its line (itself included): clients holding any of them can
 * ask for the changes since. A publish a day keeps a month; each kept version costs one row, and each
 * organization removed in that time one more.
 */
export const KEPT_VERSIONS = 30;

/**
 * Larger than SQLite's default 4 KiB: a page of listed organizations is then one or two database
 * pages, and the trees are a level shallower.
 */
export const PAGE_SIZE = 16_384;

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
 * `organization_facets` holds what each organization is counted under in facets (see store/facets.ts):
 * facet 0 its tax status (a position in `tax_statuses`), facet taxonomy position × 100 + depth the
 * terms it is in at that depth of the taxonomy (the top level is depth 1), its tags and their
 * ancestors; `facet_counts` the same counted over all organizations.
 *
 * `organization_search` gives each organization's search rank (by the number of tokens of its name,
 * then position) and what search-query.ts ranks its matches by (see Candidate there): its name's and
 * alternate name's words, and the terms it is classified under;
 * `search_vocabulary` the words of organization names, which searches are corrected and completed to.
 *
 * `dataset_versions` is the line of versions this one was published after, itself last (the highest
 * `sequence`), at most KEPT_VERSIONS; `removed_organizations` the organizations that those publishes
 * removed, each with the publish time of the version that no longer held it and its line of the
 * changes feed (see publish/history.ts and store/changes.ts). `taxonomies_version` is a hash of the
 * taxonomies and terms alone: a client whose version has the same one has them all as they are.
 */
const FULL_TEXT = "title, body, content='', tokenize='ascii'";

/** The columns of `dataset_versions` as a DatasetVersion (store.ts), oldest first by `sequence`. */
export const HISTORY_COLUMNS = 'version, published_at AS "publishedAt", taxonomies_version AS "taxonomiesVersion"';

export const HISTORY_TABLES = `
  CREATE TABLE dataset_versions (sequence INTEGER PRIMARY KEY, version TEXT NOT NULL, published_at TEXT NOT NULL, taxonomies_version TEXT NOT NULL);
  CREATE TABLE removed_organizations (position INTEGER PRIMARY KEY, id TEXT NOT NULL, removed_at TEXT NOT NULL, json TEXT NOT NULL);
`;

/**
 * The organizations' ranked text index, which an import may build in a file of its own, on another
 * thread, and copy in: ORGANIZATION_INDEX_STORED are the tables that hold it, the text index's own
 * included (see publish/search-index.ts).
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
    code TEXT NOT NULL,
    taxonomy_position INTEGER NOT NULL,
    position_in_taxonomy INTEGER NOT NULL,
    parent_position INTEGER,
    json TEXT NOT NULL,
    detail_json TEXT NOT NULL
  );
  CREATE TABLE organizations (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    modified_at TEXT NOT NULL
  );
  ${HISTORY_TABLES}
  CREATE TABLE organization_items (position INTEGER PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE organization_documents (position INTEGER PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE organization_terms (
    term_position INTEGER NOT NULL,
    position_in_term INTEGER NOT NULL,
    organization_position INTEGER NOT NULL,
    PRIMARY KEY (term_position, position_in_term)
  ) WITHOUT ROWID;
  CREATE TABLE organization_taxonomies (
    taxonomy_position INTEGER NOT NULL,
    position_in_taxonomy INTEGER NOT NULL,
    organization_position INTEGER NOT NULL,
    PRIMARY KEY (taxonomy_position, position_in_taxonomy)
  ) WITHOUT ROWID;
  CREATE TABLE organization_subtrees (
    subtree_position INTEGER NOT NULL,
    position_in_subtree INTEGER NOT NULL,
    organization_position INTEGER NOT NULL,
    PRIMARY KEY (subtree_position, position_in_subtree)
  ) WITHOUT ROWID;
  CREATE TABLE organization_tax_statuses (
    tax_status_position INTEGER NOT NULL,
    position_in_tax_status INTEGER NOT NULL,
    organization_position INTEGER NOT NULL,
    PRIMARY KEY (tax_status_position, position_in_tax_status)
  ) WITHOUT ROWID;
  CREATE TABLE tax_statuses (position INTEGER PRIMARY KEY, value TEXT NOT NULL, organizations INTEGER NOT NULL);
  CREATE TABLE organization_facets (
    position INTEGER NOT NULL,
    facet INTEGER NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (position, facet, value)
  ) WITHOUT ROWID;
  CREATE TABLE facet_counts (facet INTEGER NOT NULL, value INTEGER NOT NULL, organizations INTEGER NOT NULL, PRIMARY KEY (facet, value)) WITHOUT ROWID;
  ${ORGANIZATION_INDEX_TABLES}
  CREATE TABLE search_vocabulary (word TEXT PRIMARY KEY, token TEXT NOT NULL, organizations INTEGER NOT NULL) WITHOUT ROWID;
  CREATE VIRTUAL TABLE taxonomy_terms_text USING fts5(${FULL_TEXT});
  CREATE VIRTUAL TABLE taxonomies_text USING fts5(${FULL_TEXT});
`;

/** The lists that can be searched, each with its text index. */
export const SEARCHED_LISTS = ['organizations', 'taxonomy_terms', 'taxonomies'] as const;
export type SearchedList = (typeof SEARCHED_LISTS)[number];

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

/** Counted after the bulk load: the facets of the unfiltered list. */
export const FILL_FACET_COUNTS = 'INSERT INTO facet_counts (facet, value, organizations) SELECT facet, value, count(*) FROM organization_facets GROUP BY facet, value;';

/** Created after the bulk load, which is faster than maintaining them row by row. */
export const CREATE_INDEXES = `
  CREATE UNIQUE INDEX taxonomies_id ON taxonomies (id);
  CREATE UNIQUE INDEX taxonomy_terms_id ON taxonomy_terms (id);
  CREATE UNIQUE INDEX taxonomy_terms_in_taxonomy ON taxonomy_terms (taxonomy_position, position_in_taxonomy);
  CREATE INDEX taxonomy_terms_code ON taxonomy_terms (taxonomy_position, code);
  CREATE INDEX taxonomy_terms_by_parent ON taxonomy_terms (parent_position);
  CREATE UNIQUE INDEX organizations_id ON organizations (id);
  CREATE UNIQUE INDEX organizations_external_id ON organizations (external_id);
  CREATE INDEX organizations_modified ON organizations (modified_at);
  CREATE INDEX removed_organizations_removed_at ON removed_organizations (removed_at);
  CREATE UNIQUE INDEX organization_terms_member ON organization_terms (term_position, organization_position);
  CREATE UNIQUE INDEX organization_taxonomies_member ON organization_taxonomies (taxonomy_position, organization_position);
  CREATE UNIQUE INDEX organization_subtrees_member ON organization_subtrees (subtree_position, organization_position);
  CREATE UNIQUE INDEX organization_tax_statuses_member ON organization_tax_statuses (tax_status_position, organization_position);
`;

/** Keys of the `dataset` table. */
export const DatasetKey = {
  format: 'format',
  version: 'version',
  publishedAt: 'published_at',
  /** Counted at build, so that opening a snapshot reads no table through. */
  organizations: 'organizations',
  taxonomyTerms: 'taxonomy_terms',
} as const;
