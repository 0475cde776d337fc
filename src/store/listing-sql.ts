import { membershipConditions } from './filter-plan.ts';
import type { Membership } from './filter-plan.ts';
import type { ItemKind, TermConditions } from './listing-store.ts';
import { searchListing } from './listing.ts';
import type { Listing, TextSearch } from './listing.ts';
import type { OrganizationFilter, OrganizationView } from './store.ts';

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
}

/**
 * The SQL of every listing and item, from one dialect: both stores ask the same questions of tables
 * of the same columns (see sqlite/schema.ts and postgres/generation-schema.ts), so that they cannot
 * answer differently. Parameters are written `?`.
 */
export class ListingSql<Param> {
  private readonly dialect: SqlDialect;

  constructor(dialect: SqlDialect) {
    this.dialect = dialect;
  }

  private table(name: string): string {
    return this.dialect.table(name);
  }

  /** Where an organization's JSON is, as listed or in full (see sqlite/schema.ts). */
  organizationJsonTable(view: OrganizationView): string {
    return this.table(view.full === true ? 'organization_documents' : 'organization_items');
  }

  /** One item by its key: its JSON in a column named `json`. */
  item(kind: ItemKind): string {
    switch (kind) {
      case 'organization':
        return `SELECT d.json FROM ${this.table('organizations')} o JOIN ${this.table('organization_documents')} d ON d.position = o.position WHERE o.id = ?`;
      case 'organizationIdByNativeId':
        return `SELECT id AS json FROM ${this.table('organizations')} WHERE external_id = ?`;
      case 'taxonomy':
        return `SELECT json FROM ${this.table('taxonomies')} WHERE id = ?`;
      case 'taxonomyTerm':
        return `SELECT detail_json AS json FROM ${this.table('taxonomy_terms')} WHERE id = ?`;
    }
  }

  /** A term's reference (TermRow): by id, by taxonomy and code, by taxonomy and code in any ASCII case. */
  get termLookups(): Record<'byId' | 'byCode' | 'byCodeAnyCase', string> {
    const termRef = `SELECT t.id, x.id AS "taxonomyId", t.position, t.taxonomy_position FROM ${this.table('taxonomy_terms')} t LEFT JOIN ${this.table('taxonomies')} x ON x.position = t.taxonomy_position`;
    const lower = this.dialect.asciiLower;
    return {
      byId: `${termRef} WHERE t.id = ?`,
      byCode: `${termRef} WHERE t.taxonomy_position = ? AND t.code = ?`,
      byCodeAnyCase: `${termRef} WHERE t.taxonomy_position = ? AND ${lower('t.code')} = ${lower(this.dialect.textParameter)} ORDER BY t.position LIMIT 1`,
    };
  }

  /**
   * A range of positions of every organization (`membership` undefined: parameters first and end),
   * or of one membership list (parameters its key, first and end): the JSON, in list order.
   */
  pageByPosition(membership: Membership | undefined, view: OrganizationView): string {
    const jsonTable = this.organizationJsonTable(view);
    if (membership === undefined) return `SELECT json FROM ${jsonTable} WHERE position >= ? AND position < ? ORDER BY position`;
    const { table, group } = membership;
    return `SELECT o.json FROM ${this.table(table)} m JOIN ${jsonTable} o ON o.position = m.organization_position
       WHERE m.${group}_position = ? AND m.position_in_${group} >= ? AND m.position_in_${group} < ? ORDER BY m.position_in_${group}`;
  }

  /** Organizations by `modifiedSince` within every membership list given (no search: see each store). */
  organizationListing(filter: OrganizationFilter, memberships: readonly Membership[], view: OrganizationView): Listing<Param> {
    const base = { jsonTable: this.organizationJsonTable(view), jsonColumn: 'json' as const };
    const modified = filter.modifiedSince === undefined ? [] : ['o.modified_at >= ?'];
    const modifiedParams = (filter.modifiedSince === undefined ? [] : [filter.modifiedSince]) as Param[];
    const [membership, ...others] = memberships;
    if (membership !== undefined) {
      const group = membership.group;
      const members = membershipConditions<Param>(others, 'm.organization_position', (name) => this.table(name));
      return {
        ...base,
        from: `${this.table(membership.table)} m JOIN ${this.table('organizations')} o ON o.position = m.organization_position`,
        where: [`m.${group}_position = ?`, ...members.where, ...modified],
        params: [membership.key as Param, ...members.params, ...modifiedParams],
        order: `m.position_in_${group}`,
        position: 'm.organization_position',
      };
    }
    // Those modified since are found through the index of modification times (SQLite is told so; PostgreSQL's planner needs no hint).
    const from = `${this.table('organizations')} o${filter.modifiedSince === undefined ? '' : this.dialect.indexedBy('organizations_modified')}`;
    return { ...base, from, where: modified, params: modifiedParams, order: 'o.position', position: 'o.position' };
  }

  /** Every taxonomy, or those whose text holds the words (`text`: the search in the store's text table aliased `x`). */
  taxonomyListing(text: TextSearch<Param> | undefined): Listing<Param> {
    const base = { jsonTable: this.table('taxonomies'), jsonColumn: 'json' as const };
    if (text === undefined) return { ...base, from: this.table('taxonomies'), where: [], params: [], order: 'position', position: 'position' };
    return searchListing<Param>(base, `${this.table('taxonomies_text')} x`, `x.${this.dialect.textPosition}`, text);
  }

  /** The organizations removed after an instant (its parameter), in the order they were removed. */
  removedListing(after: string): Listing<Param> {
    const table = this.table('removed_organizations');
    return { jsonTable: table, jsonColumn: 'json', from: table, where: ['removed_at > ?'], params: [after as Param], order: 'position', position: 'position' };
  }

  /** Terms meeting `conditions` (on the terms table aliased `t`), and holding the words when `text` is given (text table aliased `x`). */
  termListing(conditions: TermConditions<Param>, text: TextSearch<Param> | undefined): Listing<Param> {
    const base = { jsonTable: this.table('taxonomy_terms'), jsonColumn: 'json' as const };
    if (text === undefined) return { ...base, from: `${this.table('taxonomy_terms')} t`, ...conditions, order: 't.position', position: 't.position' };
    const from = `${this.table('taxonomy_terms_text')} x JOIN ${this.table('taxonomy_terms')} t ON t.position = x.${this.dialect.textPosition}`;
    return searchListing<Param>(base, from, 't.position', text, conditions);
  }
}
