import { membershipConditions } from './filter-plan.ts';
import type { Membership } from './filter-plan.ts';
import type { ItemKind, TermConditions } from './listing-store.ts';
import { searchListing } from './listing.ts';
import type { Listing, TextSearch } from './listing.ts';
import { CATEGORY_GROUP_STEP, MEMBER_KEY_STEP, numberedCategoryTerms, TAGGED_FLAG } from './search-categories.ts';
import type { SearchCategories } from './search-categories.ts';
import type { OrganizationFilter, OrganizationView } from './store.ts';
import { storedInstant } from './tables.ts';

/**
 * What the SQL of the two stores differs in, besides text search (see each store's textSearch):
 * SQLite reads a snapshot's tables by name; PostgreSQL reads them in the schema of a generation.
 */
export interface SqlDialect {
  /** A table of the dataset. */
  table(name: string): string;
  /** ASCII letters in lower case and nothing else changed, as both stores compare codes. */
  asciiLower(expression: string): string;
  /** A parameter holding text, where the database cannot tell its type by itself. */
  textParameter: string;
  /** The column of a text table (aliased `x` in a search) that holds the position of the row it indexes. */
  textPosition: string;
  /** What follows a table to have it read through this index, where the planner needs telling. */
  indexedBy(index: string): string;
  /** An integer expression (a count) as the driver gives it back as a number. */
  integer(expression: string): string;
  /** A condition that `column` is one of `count` integers, and the parameters that give them. */
  anyInteger(column: string, count: number): string;
  integerParams(values: readonly number[]): unknown[];
  /** An aggregate of an integer expression over the rows as a JSON array (text from SQLite, parsed by the PostgreSQL driver). */
  integerArray(expression: string): string;
  /** A FROM item of positions given as one parameter (positionsParam), aliased `p`: `p.position`, and `p.n` their order. */
  orderedPositions: string;
  positionsParam(positions: readonly number[]): unknown;
  /** Whether the driver takes parameters numbered ($1, $2, …) rather than as `?`. */
  numberedParameters: boolean;
}

/** A query and its parameters. */
export interface Query<Param> {
  sql: string;
  params: Param[];
}

/** A served document's columns as every read selects them: the JSON as `json`, its check as `crc` (see document-check.ts). */
const document = (alias: string, column: string): string => `${alias}.${column} AS json, ${alias}.${column}_crc AS crc`;

/**
 * The columns and join that give the documents of a listing's rows, its JSON table aliased `alias`:
 * for full organizations, the details (see packed-documents.ts) follow as `details` and `details_crc`.
 */
const documentOf = (json: Pick<Listing<unknown>, 'jsonTable' | 'jsonColumn' | 'detailsTable'>, alias: string): { columns: string; join: string } =>
  json.detailsTable === undefined
    ? { columns: document(alias, json.jsonColumn), join: '' }
    : { columns: `${document(alias, json.jsonColumn)}, d.json AS details, d.json_crc AS details_crc`, join: ` JOIN ${json.detailsTable} d ON d.position = ${alias}.position` };

/**
 * The SQL of every listing and item, from one dialect: both stores ask the same questions of tables
 * of the same columns (see tables.ts), so that they cannot answer differently. Parameters are
 * written `?`; driverText gives the text a driver takes.
 */
export class ListingSql<Param> {
  private readonly dialect: SqlDialect;

  /** Each SQL text with numbered parameters, made once (the texts are few): see driverText. */
  private readonly numbered = new Map<string, string>();

  /**
   * One item by its key, per kind: its JSON in a column named `json` and, for a document, its check
   * in `crc` (see document-check.ts); the native id lookup answers an id, which is not served as it is.
   */
  readonly items: Record<ItemKind, string>;
  /** A term's reference (TermRow): by id, by taxonomy and code, by taxonomy and code in any ASCII case. */
  readonly termLookups: Record<'byId' | 'byCode' | 'byCodeAnyCase', string>;

  constructor(dialect: SqlDialect) {
    this.dialect = dialect;
    const table = (name: string) => dialect.table(name);
    const organization = documentOf(this.organizationJson({ full: true }), 'i');
    this.items = {
      organization: `SELECT ${organization.columns} FROM ${table('organizations')} o JOIN ${table('organization_items')} i ON i.position = o.position${organization.join} WHERE o.id = ?`,
      organizationIdByNativeId: `SELECT id AS json FROM ${table('organizations')} WHERE external_id = ?`,
      taxonomy: `SELECT ${document('x', 'json')} FROM ${table('taxonomies')} x WHERE x.id = ?`,
      taxonomyTerm: `SELECT ${document('t', 'detail_json')} FROM ${table('taxonomy_terms')} t WHERE t.id = ?`,
    };
    const termRef = `SELECT t.id, x.id AS "taxonomyId", t.position, t.taxonomy_position FROM ${table('taxonomy_terms')} t LEFT JOIN ${table('taxonomies')} x ON x.position = t.taxonomy_position`;
    const lower = dialect.asciiLower;
    this.termLookups = {
      byId: `${termRef} WHERE t.id = ?`,
      byCode: `${termRef} WHERE t.taxonomy_position = ? AND t.code = ?`,
      byCodeAnyCase: `${termRef} WHERE t.taxonomy_position = ? AND ${lower('t.code')} = ${lower(dialect.textParameter)} ORDER BY t.position LIMIT 1`,
    };
  }

  /** `sql` as the dialect's driver takes it: `?` parameters numbered in order where it wants them so (no SQL here holds a literal question mark). */
  driverText(sql: string): string {
    if (!this.dialect.numberedParameters) return sql;
    let text = this.numbered.get(sql);
    if (text === undefined) {
      let index = 0;
      text = sql.replaceAll('?', () => `$${++index}`);
      this.numbered.set(sql, text);
    }
    return text;
  }

  /** A table of the dataset, as the dialect names it. */
  table(name: string): string {
    return this.dialect.table(name);
  }

  /** The condition of `modifiedSince` on the organizations table aliased `o`, if the filter has one. */
  modifiedSince(filter: OrganizationFilter): { where: string[]; params: Param[] } {
    return filter.modifiedSince === undefined ? { where: [], params: [] } : { where: ['o.modified_at >= ?'], params: [storedInstant(filter.modifiedSince) as Param] };
  }

  /** Where an organization's JSON is, as listed or in full (see tables.ts). */
  organizationJson(view: OrganizationView): Pick<Listing<Param>, 'jsonTable' | 'jsonColumn' | 'detailsTable'> {
    const listed = { jsonTable: this.table('organization_items'), jsonColumn: 'json' as const };
    return view.full === true ? { ...listed, detailsTable: this.table('organization_documents') } : listed;
  }

  /**
   * A range of positions of every organization (`membership` undefined: parameters first and end),
   * or of one membership list (parameters its key, first and end): the JSON, in list order.
   */
  pageByPosition(membership: Membership | undefined, view: OrganizationView): string {
    const json = this.organizationJson(view);
    const { columns, join } = documentOf(json, 'o');
    if (membership === undefined) return `SELECT ${columns} FROM ${json.jsonTable} o${join} WHERE o.position >= ? AND o.position < ? ORDER BY o.position`;
    const { table, group } = membership;
    return `SELECT ${columns} FROM ${this.table(table)} m JOIN ${json.jsonTable} o ON o.position = m.organization_position${join}
       WHERE m.${group}_position = ? AND m.position_in_${group} >= ? AND m.position_in_${group} < ? ORDER BY m.position_in_${group}`;
  }

  /** Organizations by `modifiedSince` within every membership list given (no search: see each store). */
  organizationListing(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView): Listing<Param> {
    const base = this.organizationJson(view);
    const modified = this.modifiedSince(filter);
    const [membership, ...others] = memberships;
    if (membership !== undefined) {
      const group = membership.group;
      const members = membershipConditions<Param>(others, 'm.organization_position', (name) => this.table(name));
      return {
        ...base,
        from: `${this.table(membership.table)} m JOIN ${this.table('organizations')} o ON o.position = m.organization_position`,
        where: [`m.${group}_position = ?`, ...members.where, ...modified.where],
        params: [membership.key as Param, ...members.params, ...modified.params],
        order: `m.position_in_${group}`,
        position: 'm.organization_position',
      };
    }
    // Those modified since are found through the index of modification times (SQLite is told so; PostgreSQL has no such hint).
    const from = `${this.table('organizations')} o${filter.modifiedSince === undefined ? '' : this.dialect.indexedBy('organizations_modified')}`;
    return { ...base, from, ...modified, order: 'o.position', position: 'o.position' };
  }

  /**
   * The organizations under a search's category terms (or below them) within every membership list
   * and `modifiedSince`, as one row holding `keys`, an array of their keys (see MemberKey): one per
   * organization and term it is under, and one more per term it is tagged with itself. Ordered and
   * counted by search-categories.ts. One array, not a row each: 35,000 rows took SQLite 7 to 17 ms,
   * their array 4.
   */
  categoryMembers(filter: OrganizationFilter, memberships: readonly Membership[], categories: SearchCategories): Query<Param> {
    const { listing, terms: named } = numberedCategoryTerms(categories);
    const numbered = named.map(({ term, group }) => group * CATEGORY_GROUP_STEP + term);
    const terms = `(SELECT p.position / ${CATEGORY_GROUP_STEP} AS grp, p.position % ${CATEGORY_GROUP_STEP} AS term FROM ${this.dialect.orderedPositions}) t`;
    const modified = this.modifiedSince(filter);
    const rows = (table: string, group: string, flag: number, listingOnly: boolean) => {
      const members = membershipConditions<Param>(memberships, 'c.organization_position', (name) => this.table(name));
      const join = filter.modifiedSince === undefined ? '' : ` JOIN ${this.table('organizations')} o ON o.position = c.organization_position`;
      const where = [...(listingOnly ? ['t.grp < ?'] : []), ...members.where, ...modified.where];
      return {
        sql: `SELECT c.organization_position * ${MEMBER_KEY_STEP} + ${flag} + t.grp AS k FROM ${terms} JOIN ${this.table(table)} c ON c.${group}_position = t.term${join}${where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`}`,
        params: [this.dialect.positionsParam(numbered) as Param, ...(listingOnly ? [listing as Param] : []), ...members.params, ...modified.params],
      };
    };
    const under = rows('organization_subtrees', 'subtree', 0, false);
    // Only the terms of the groups that list are ordered by their own tags.
    const tagged = rows('organization_terms', 'term', TAGGED_FLAG, true);
    return { sql: `SELECT ${this.dialect.integerArray('k')} AS keys FROM (${under.sql} UNION ALL ${tagged.sql}) keyed`, params: [...under.params, ...tagged.params] };
  }

  /** Organizations at these positions, in this order: a list read only through jsonOf and facetCounts. */
  positionsListing(view: OrganizationView, positions: readonly number[]): Listing<Param> {
    return { ...this.organizationJson(view), from: this.dialect.orderedPositions, where: [], params: [this.dialect.positionsParam(positions) as Param], order: 'p.n', position: 'p.position' };
  }

  /** Every taxonomy, or those whose text holds the words (`text`: the search in the store's text table aliased `x`). */
  taxonomyListing(text: TextSearch<Param> | undefined): Listing<Param> {
    const base = { jsonTable: this.table('taxonomies'), jsonColumn: 'json' as const };
    if (text === undefined) return { ...base, from: this.table('taxonomies'), where: [], params: [], order: 'position', position: 'position' };
    return searchListing<Param>(base, `${this.table('taxonomies_text')} x`, `x.${this.dialect.textPosition}`, text);
  }

  /**
   * The organizations the version published at an instant held that are not served now, in the order
   * they were removed (see tables.ts): each once, with the row of the removal that followed that version.
   */
  removedListing(since: string): Listing<Param> {
    const table = this.table('removed_organizations');
    return {
      jsonTable: table,
      jsonColumn: 'json',
      from: `${table} r`,
      where: ['r.added_at <= ?', 'r.removed_at > ?', `NOT EXISTS (SELECT 1 FROM ${this.table('organizations')} o WHERE o.id = r.id)`],
      params: [since as Param, since as Param],
      order: 'r.position',
      position: 'r.position',
    };
  }

  /** Terms meeting `conditions` (on the terms table aliased `t`), and holding the words when `text` is given (text table aliased `x`). */
  termListing(conditions: TermConditions<Param>, text: TextSearch<Param> | undefined): Listing<Param> {
    const base = { jsonTable: this.table('taxonomy_terms'), jsonColumn: 'json' as const };
    if (text === undefined) return { ...base, from: `${this.table('taxonomy_terms')} t`, ...conditions, order: 't.position', position: 't.position' };
    const from = `${this.table('taxonomy_terms_text')} x JOIN ${this.table('taxonomy_terms')} t ON t.position = x.${this.dialect.textPosition}`;
    return searchListing<Param>(base, from, 't.position', text, conditions);
  }

  private static where(listing: Listing<unknown>, extra: string[] = []): string {
    const conditions = [...listing.where, ...extra];
    return conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  }

  /** How many rows a listing holds (its `length` query when it has one): one row, `n`. */
  count(listing: Listing<Param>): Query<Param> {
    if (listing.length !== undefined) return listing.length;
    return { sql: `SELECT ${this.dialect.integer('count(*)')} AS n FROM ${listing.from}${ListingSql.where(listing)}`, params: listing.params };
  }

  /**
   * The JSON of the rows at 0-based `offset`, in order (by relevance first when `ranked` and the
   * listing has a ranking), in one statement: the rows are ordered and cut by position, and their JSON
   * joined in for those kept only.
   */
  page(listing: Listing<Param>, offset: number, limit: number, ranked: boolean): Query<Param> {
    const rank = ranked && listing.ranking !== undefined;
    const { columns, join } = documentOf(listing, 'j');
    const sql = `SELECT ${columns} FROM (
        SELECT ${listing.position} AS p, ${rank ? `${listing.ranking} AS r, ` : ''}${listing.order} AS k
        FROM ${listing.from}${ListingSql.where(listing)}
        ORDER BY ${rank ? 'r, ' : ''}k LIMIT ? OFFSET ?
      ) page JOIN ${listing.jsonTable} j ON j.position = page.p${join} ORDER BY ${rank ? 'page.r, ' : ''}page.k`;
    const rows = [limit, offset] as Param[];
    return { sql, params: rank ? [...(listing.rankingParams ?? []), ...listing.params, ...rows] : [...listing.params, ...rows] };
  }

  /**
   * The next `limit` rows in list order after the row whose order key is `after` (0 for the first):
   * `k`, the order key, and the JSON with its check. Whole lists are read so, a batch at a time, with
   * no OFFSET.
   */
  batchAfter(listing: Listing<Param>, after: number, limit: number): Query<Param> {
    const { columns, join } = documentOf(listing, 'j');
    const sql = `SELECT page.k, ${columns} FROM (
        SELECT ${listing.position} AS p, ${listing.order} AS k
        FROM ${listing.from}${ListingSql.where(listing, [`${listing.order} > ?`])}
        ORDER BY k LIMIT ${limit}
      ) page JOIN ${listing.jsonTable} j ON j.position = page.p${join} ORDER BY page.k`;
    return { sql, params: [...listing.params, after as Param] };
  }

  /** Organizations per value of each facet in a listing, or (no listing) in the unfiltered list: rows of FacetCount. */
  facetCounts(listing: Listing<Param> | undefined, facets: readonly number[]): Query<Param> {
    const facetParams = this.dialect.integerParams(facets) as Param[];
    if (listing === undefined) {
      return { sql: `SELECT facet, value, organizations AS count FROM ${this.table('facet_counts')} WHERE ${this.dialect.anyInteger('facet', facets.length)}`, params: facetParams };
    }
    const positions = `SELECT ${listing.position} AS position FROM ${listing.from}${ListingSql.where(listing)}`;
    const sql = `SELECT f.facet, f.value, ${this.dialect.integer('count(*)')} AS count FROM (${positions}) p JOIN ${this.table('organization_facets')} f ON f.position = p.position AND ${this.dialect.anyInteger('f.facet', facets.length)} GROUP BY f.facet, f.value`;
    return { sql, params: [...listing.params, ...facetParams] };
  }

  /**
   * The first `limit` matches of an organization search in list order, with what they are ranked by
   * (rows of Candidate). `walk`: read the list order until there are enough; else every match is
   * sorted (`+ 0` keeps PostgreSQL's planner from walking).
   */
  candidates(listing: Listing<Param>, limit: number, walk = true): Query<Param> {
    const { rank, names } = listing.candidates!;
    const order = walk ? listing.order : `${listing.order} + 0`;
    const sql = `SELECT ${listing.position} AS position, ${rank} AS rank, ${names} AS names FROM ${listing.from}${ListingSql.where(listing)} ORDER BY ${order} LIMIT ?`;
    return { sql, params: [...listing.params, limit as Param] };
  }

  /** The JSON of these positions of the listing's JSON table, in the order given. */
  jsonOf(listing: Listing<Param>, positions: readonly number[]): Query<Param> {
    const { columns, join } = documentOf(listing, 'j');
    const sql = `SELECT ${columns} FROM ${this.dialect.orderedPositions} JOIN ${listing.jsonTable} j ON j.position = p.position${join} ORDER BY p.n`;
    return { sql, params: [this.dialect.positionsParam(positions) as Param] };
  }
}

/**
 * Every row's JSON, in order, `size` at a time: a ranked list (small: see RANKED_SEARCH_LIMIT) in
 * pages, any other resuming after the last order key read, with no OFFSET. `json` runs a page;
 * `keyed` a batchAfter, its rows' order keys and verified JSON.
 */
export async function* inBatches<Param>(
  sql: ListingSql<Param>,
  listing: Listing<Param>,
  ranked: boolean,
  size: number,
  json: (query: Query<Param>) => Promise<string[]>,
  keyed: (query: Query<Param>) => Promise<{ keys: number[]; json: string[] }>,
): AsyncGenerator<string[]> {
  if (ranked && listing.ranking !== undefined) {
    for (let offset = 0; ; offset += size) {
      const items = await json(sql.page(listing, offset, size, true));
      if (items.length > 0) yield items;
      if (items.length < size) return;
    }
  }
  for (let after = 0; ; ) {
    const { keys, json: items } = await keyed(sql.batchAfter(listing, after, size));
    if (items.length > 0) yield items;
    if (items.length < size) return;
    after = keys.at(-1)!;
  }
}
