import { hash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { organizationId } from '../hsds/ids.ts';
import { renderOrganization, withLastModified } from '../hsds/render.ts';
import type { RenderedTerm, ResolvedTag } from '../hsds/render.ts';
import type { DatasetInput, OrganizationIdentifierRecord, OrganizationRecord, TagRecord, UrlRecord } from '../hsds/records.ts';
import type { PreviousVersions } from './previous-versions.ts';
import type { SearchIndexWriter } from './search-index.ts';
import { stagingKey } from './staging.ts';
import { termKey } from './vocabulary.ts';
import { TAX_STATUS_FACET, termFacet } from '../store/facets.ts';

export interface OrganizationWriter {
  input: DatasetInput;
  termByKey: ReadonlyMap<string, RenderedTerm>;
  /** 1-based positions of terms (by id) and taxonomies (by code) in their served lists. */
  termPositions: ReadonlyMap<string, number>;
  taxonomyPositions: ReadonlyMap<string, number>;
  /** The positions of each term and its ancestors, by term id: the subtrees an organization tagged with it is in. */
  subtreesOf: ReadonlyMap<string, readonly number[]>;
  previous: PreviousVersions;
  searchIndex: SearchIndexWriter;
  /** This publish's time: `last_modified` of every new or changed organization. */
  publishedAt: string;
  /** Every served document goes into the dataset version. */
  hash: Hash;
  onProgress?: (written: number) => void;
}

const PROGRESS_EVERY = 10_000;

/**
 * Writes the published organizations in served order, with their search text and their memberships
 * of terms and taxonomies (for filtered lists), and returns how many were written.
 */
export function writeOrganizations(db: DatabaseSync, writer: OrganizationWriter): number {
  const parentState = db.prepare('SELECT published FROM staging.organizations WHERE external_id = ?');
  const insert = db.prepare('INSERT INTO organizations (position, id, external_id, content_hash, modified_at) VALUES (?, ?, ?, ?, ?)');
  const insertItem = db.prepare('INSERT INTO organization_items (position, json) VALUES (?, ?)');
  const insertDocument = db.prepare('INSERT INTO organization_documents (position, json) VALUES (?, ?)');
  const termMembers = new MemberLists();
  const taxonomyMembers = new MemberLists();
  const subtreeMembers = new MemberLists();
  const taxStatusMembers = new MemberLists();
  const taxStatusPositions = new Map<string, number>();
  const facets = new FacetRows(db);
  // Links are gathered per organization first; these tables are keyed by native id, as organizations
  // are, so the join below reads them all in step and only the final sort is by name. This keeps
  // every read sequential, whatever the size of the input.
  db.exec(`
    CREATE TABLE staging.tag_lists (external_id TEXT PRIMARY KEY, tags TEXT NOT NULL) WITHOUT ROWID;
    INSERT INTO staging.tag_lists
      SELECT external_id, json_group_array(json_array(taxonomy, code, attribute_id, label, link_type, value) ORDER BY rowid) FROM staging.tags GROUP BY external_id;
    CREATE TABLE staging.identifier_lists (external_id TEXT PRIMARY KEY, identifiers TEXT NOT NULL) WITHOUT ROWID;
    INSERT INTO staging.identifier_lists
      SELECT external_id, json_group_array(json(record) ORDER BY rowid) FROM staging.identifiers GROUP BY external_id;
    CREATE TABLE staging.url_lists (external_id TEXT PRIMARY KEY, urls TEXT NOT NULL) WITHOUT ROWID;
    INSERT INTO staging.url_lists
      SELECT external_id, json_group_array(json(record) ORDER BY rowid) FROM staging.urls GROUP BY external_id;
  `);
  const inServedOrder = db.prepare(`
    SELECT o.record, t.tags, i.identifiers, u.urls FROM staging.organizations o
      LEFT JOIN staging.tag_lists t ON t.external_id = o.external_id
      LEFT JOIN staging.identifier_lists i ON i.external_id = o.external_id
      LEFT JOIN staging.url_lists u ON u.external_id = o.external_id
    WHERE o.published = 1 ORDER BY o.sort_key, o.external_id`);
  let position = 0;
  for (const row of inServedOrder.iterate() as Iterable<{ record: string; tags: string | null; identifiers: string | null; urls: string | null }>) {
    const organization = JSON.parse(row.record) as OrganizationRecord;
    const linkedTags = row.tags === null ? [] : (JSON.parse(row.tags) as (string | null)[][]).map(
      ([taxonomy, code, attributeId, label, linkType, value]): TagRecord => ({
        taxonomy: taxonomy!,
        code: code!,
        attributeId: attributeId ?? undefined,
        label: label ?? undefined,
        linkType: linkType ?? undefined,
        value: value ?? undefined,
      }),
    );
    const linkedIdentifiers = row.identifiers === null ? [] : (JSON.parse(row.identifiers) as OrganizationIdentifierRecord[]);
    const linkedUrls = row.urls === null ? [] : (JSON.parse(row.urls) as UrlRecord[]);
    const record = {
      ...organization,
      additionalWebsites: uniqueUrls([...(organization.additionalWebsites ?? []), ...linkedUrls]),
      identifiers: uniqueIdentifiers([...organization.identifiers, ...linkedIdentifiers]),
    };
    const tags = resolveTags([...organization.tags, ...linkedTags], writer.termByKey, writer.input.impliedTags);
    const parentId = servedParentId(organization, parentState);
    const rendered = renderOrganization(record, tags, parentId);
    const contentHash = hash('sha1', rendered.detailJson, 'base64');
    const modifiedAt = writer.previous.unchangedSince(organization.externalId, contentHash) ?? writer.publishedAt;
    const detailJson = withLastModified(rendered.detailJson, modifiedAt);
    writer.hash.update(detailJson).update('\n');
    insert.run(++position, rendered.id, organization.externalId, contentHash, modifiedAt);
    insertItem.run(position, withLastModified(rendered.listJson, modifiedAt));
    insertDocument.run(position, detailJson);
    writer.searchIndex.writeOrganization(
      position,
      organization.name,
      organization.alternateName,
      organization.description,
      tags.map(({ term }) => ({ name: term.name, position: writer.termPositions.get(term.id)! })),
    );
    const taxonomies = new Set<string>();
    const subtrees = new Set<number>();
    for (const { term } of tags) {
      termMembers.add(writer.termPositions.get(term.id)!, position);
      if (term.taxonomy !== undefined) taxonomies.add(term.taxonomy.code);
      for (const subtree of writer.subtreesOf.get(term.id)!) subtrees.add(subtree);
    }
    for (const code of taxonomies) taxonomyMembers.add(writer.taxonomyPositions.get(code)!, position);
    for (const subtree of subtrees) subtreeMembers.add(subtree, position);
    for (const { term } of tags) {
      if (term.taxonomy === undefined) continue;
      const taxonomyPosition = writer.taxonomyPositions.get(term.taxonomy.code)!;
      const path = writer.subtreesOf.get(term.id)!;
      path.forEach((termPosition, index) => facets.add(position, termFacet(taxonomyPosition, path.length - index), termPosition));
    }
    if (record.taxStatus !== undefined) {
      let taxStatus = taxStatusPositions.get(record.taxStatus);
      if (taxStatus === undefined) taxStatusPositions.set(record.taxStatus, (taxStatus = taxStatusPositions.size + 1));
      taxStatusMembers.add(taxStatus, position);
      facets.add(position, TAX_STATUS_FACET, taxStatus);
    }
    if (position % PROGRESS_EVERY === 0) writer.onProgress?.(position);
  }
  writer.onProgress?.(position);
  facets.flush();
  termMembers.write(db, 'organization_terms (term_position, position_in_term, organization_position)');
  taxonomyMembers.write(db, 'organization_taxonomies (taxonomy_position, position_in_taxonomy, organization_position)');
  subtreeMembers.write(db, 'organization_subtrees (subtree_position, position_in_subtree, organization_position)');
  const insertTaxStatus = db.prepare('INSERT INTO tax_statuses (position, value, organizations) VALUES (?, ?, ?)');
  for (const [value, taxStatus] of taxStatusPositions) insertTaxStatus.run(taxStatus, value, taxStatusMembers.length(taxStatus));
  taxStatusMembers.write(db, 'organization_tax_statuses (tax_status_position, position_in_tax_status, organization_position)');
  return position;
}

/**
 * A parent in the input is named only when it is published. One that is not in the input is named as
 * given where references may dangle (an HSDS package may refer to organizations published elsewhere),
 * and left out otherwise.
 */
function servedParentId({ parentExternalId: parent, lenientReferences }: OrganizationRecord, parentState: StatementSync): string | undefined {
  if (parent === undefined) return undefined;
  const state = parentState.get(stagingKey(parent)) as { published: number } | undefined;
  if (state === undefined) return lenientReferences === true ? organizationId(parent) : undefined;
  return state.published === 1 ? organizationId(parent) : undefined;
}

/**
 * The organizations of each term (or taxonomy), by position. Organizations arrive in served order,
 * so every list is already sorted, and rows go out in key order: no sort, no random writes. Lists
 * are typed arrays: 4 bytes per tag, whatever the size of the input.
 */
class MemberLists {
  private readonly lists = new Map<number, { positions: Int32Array; length: number }>();

  add(key: number, organizationPosition: number): void {
    let list = this.lists.get(key);
    if (list === undefined) {
      list = { positions: new Int32Array(64), length: 0 };
      this.lists.set(key, list);
    }
    if (list.length === list.positions.length) {
      const grown = new Int32Array(list.positions.length * 2);
      grown.set(list.positions);
      list.positions = grown;
    }
    list.positions[list.length++] = organizationPosition;
  }

  length(key: number): number {
    return this.lists.get(key)?.length ?? 0;
  }

  /**
   * Inserts (key, 1-based position in the list, organization position) rows into `table (columns)`,
   * in key order, a slice of a list per statement (as a JSON array: one call for thousands of rows).
   */
  write(db: DatabaseSync, tableAndColumns: string): void {
    const insert = db.prepare(`INSERT INTO ${tableAndColumns} SELECT ?, ? + key, value FROM json_each(?)`);
    for (const key of [...this.lists.keys()].sort((a, b) => a - b)) {
      const { positions, length } = this.lists.get(key)!;
      for (let start = 0; start < length; start += ROWS_PER_STATEMENT) {
        insert.run(key, start + 1, JSON.stringify(Array.from(positions.subarray(start, Math.min(length, start + ROWS_PER_STATEMENT)))));
      }
    }
    this.lists.clear();
  }
}

/** Rows handed to SQLite per statement as one JSON array: per-row calls cost more than the rows. */
const ROWS_PER_STATEMENT = 10_000;

/** What each organization is counted under in facets, inserted ROWS_PER_STATEMENT at a time; a repeat is kept once. */
class FacetRows {
  private readonly insert: StatementSync;
  private rows: number[] = [];

  constructor(db: DatabaseSync) {
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO organization_facets (position, facet, value) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)',
    );
  }

  add(position: number, facet: number, value: number): void {
    this.rows.push(position, facet, value);
    if (this.rows.length >= 3 * ROWS_PER_STATEMENT) this.flush();
  }

  flush(): void {
    if (this.rows.length === 0) return;
    const triples: number[][] = [];
    for (let at = 0; at < this.rows.length; at += 3) triples.push(this.rows.slice(at, at + 3));
    this.insert.run(JSON.stringify(triples));
    this.rows = [];
  }
}

/**
 * Tags in the order given, then the tags they imply, each term once. A repeat of a term only fills in
 * what the first tag of it left out, so an attribute id or label given anywhere is kept.
 */
function resolveTags(
  tags: readonly TagRecord[],
  termByKey: ReadonlyMap<string, RenderedTerm>,
  impliedTags: DatasetInput['impliedTags'],
): ResolvedTag[] {
  const resolved = new Map<string, ResolvedTag>();
  const add = (tag: TagRecord) => {
    const key = termKey(tag.taxonomy, tag.code);
    const first = resolved.get(key);
    if (first === undefined) {
      const { attributeId, label, linkType, value } = tag;
      resolved.set(key, { term: termByKey.get(key)!, attributeId, label, linkType, value });
    } else {
      first.attributeId ??= tag.attributeId;
      first.label ??= tag.label;
      first.linkType ??= tag.linkType;
      first.value ??= tag.value;
    }
  };
  tags.forEach(add);
  if (impliedTags !== undefined) for (const tag of tags) impliedTags(tag).forEach(add);
  return [...resolved.values()];
}

/** One url object per URL: a repeat would get the same derived id. */
function uniqueUrls(urls: readonly UrlRecord[]): UrlRecord[] {
  const byUrl = new Map<string, UrlRecord>();
  for (const url of urls) if (!byUrl.has(url.url)) byUrl.set(url.url, url);
  return [...byUrl.values()];
}

function uniqueIdentifiers(identifiers: readonly OrganizationIdentifierRecord[]): OrganizationIdentifierRecord[] {
  const byKey = new Map<string, OrganizationIdentifierRecord>();
  for (const identifier of identifiers) {
    const key = `${identifier.scheme ?? ''}\u0000${identifier.identifier}`;
    if (!byKey.has(key)) byKey.set(key, identifier);
  }
  return [...byKey.values()];
}
