import type { Hash } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { documentCheck } from '../store/document-check.ts';
import { FragmentNumbers, PackingWriter, withTails, WRITER_FRAGMENTS } from '../store/packed-documents.ts';
import type { RenderedTerm } from '../hsds/render.ts';
import type { DatasetInput } from '../hsds/records.ts';
import type { PreviousVersions } from './previous-versions.ts';
import { batchRenderer, vocabularyForRendering } from './render-organizations.ts';
import type { RenderedRow, StagedRow } from './render-organizations.ts';
import type { SearchIndexWriter } from './search-index.ts';
import { TAX_STATUS_FACET, termFacet } from '../store/facets.ts';
import { storedInstant } from '../store/tables.ts';

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
  /** This publish's time: `last_modified` of every new or changed organization, and `added_at` of every new one. */
  publishedAt: string;
  /** Every served organization goes into the dataset version (see RenderedRow.servedHash). */
  hash: Hash;
  onProgress?: (written: number) => void;
  /** Render on a worker thread (true) or this one (false). */
  renderInWorker: boolean;
  /** Called once every organization is written, before the memberships. */
  beforeMemberships?: () => void;
}

const PROGRESS_EVERY = 10_000;
const ROWS_PER_BATCH = 50;
const BATCHES_IN_FLIGHT = 2;

/**
 * Writes the published organizations in served order, with their search text (staged in the search
 * index) and their memberships of terms and taxonomies (for filtered lists), and returns how many
 * were written.
 */
export async function writeOrganizations(db: DatabaseSync, writer: OrganizationWriter): Promise<number> {
  const insert = db.prepare('INSERT INTO organizations (position, id, external_id, content_hash, modified_at, added_at) VALUES (?, ?, ?, ?, ?, ?)');
  const termMembers = new MemberLists();
  const taxonomyMembers = new MemberLists();
  const subtreeMembers = new MemberLists();
  const taxStatusMembers = new MemberLists();
  const taxStatusPositions = new Map<string, number>();
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
    SELECT o.record, t.tags, i.identifiers, u.urls, p.published AS parent_published FROM staging.organizations o
      LEFT JOIN staging.tag_lists t ON t.external_id = o.external_id
      LEFT JOIN staging.identifier_lists i ON i.external_id = o.external_id
      LEFT JOIN staging.url_lists u ON u.external_id = o.external_id
      LEFT JOIN staging.organizations p ON p.external_id = o.parent
    WHERE o.published = 1 ORDER BY o.sort_key, o.external_id`);
  const termById = new Map([...writer.termByKey.values()].map((term) => [term.id, term]));
  // Batches go to the renderer as they are read; while it renders the next one, this thread writes the
  // one before. Small batches, two in flight: more kept rows long enough to reach V8's old space,
  // whose growth took the bundled import's peak from 346 to 420 MB at 100 rows × 3 for no gain in time.
  const renderer = batchRenderer(vocabularyForRendering(writer.termByKey, writer.input.impliedTags), writer.renderInWorker);
  let position = 0;
  try {
    const packed = new PackedWriter(db);
    const write = (rendered: RenderedRow) => {
      const carried = writer.previous.carriedOn(rendered.id, rendered.externalId, rendered.contentHash);
      // The column is when this line of versions last changed it (what `modified_after` and the changes
      // feed select by); the document says when it last changed where it came from, when the source says.
      const modifiedAt = carried.modifiedAt ?? writer.publishedAt;
      const lastModified = rendered.lastModified ?? modifiedAt;
      const readAt = rendered.needsReadAt ? modifiedAt : undefined;
      // The served document in few bytes (see RenderedRow.servedHash): a hash of it less its times, and the times.
      writer.hash.update(`${rendered.servedHash}\t${readAt ?? rendered.readAt ?? ''}\t${lastModified}\n`);
      insert.run(++position, rendered.id, rendered.externalId, rendered.contentHash, storedInstant(modifiedAt), storedInstant(carried.addedAt ?? writer.publishedAt));
      packed.add(position, rendered, lastModified, readAt);
      const terms = rendered.termIds.map((id) => termById.get(id)!);
      const topics = terms.map((term) => ({ name: term.name, position: writer.termPositions.get(term.id)! }));
      writer.searchIndex.writeOrganization(position, rendered.name, rendered.alternateName, rendered.descriptionLine, topics);
      const taxonomies = new Set<string>();
      const subtrees = new Set<number>();
      for (const term of terms) {
        termMembers.add(writer.termPositions.get(term.id)!, position);
        if (term.taxonomy !== undefined) taxonomies.add(term.taxonomy.code);
        for (const subtree of writer.subtreesOf.get(term.id)!) subtrees.add(subtree);
      }
      for (const code of taxonomies) taxonomyMembers.add(writer.taxonomyPositions.get(code)!, position);
      for (const subtree of subtrees) subtreeMembers.add(subtree, position);
      if (rendered.taxStatus !== undefined) {
        let taxStatus = taxStatusPositions.get(rendered.taxStatus);
        if (taxStatus === undefined) taxStatusPositions.set(rendered.taxStatus, (taxStatus = taxStatusPositions.size + 1));
        taxStatusMembers.add(taxStatus, position);
      }
      if (position % PROGRESS_EVERY === 0) writer.onProgress?.(position);
    };
    const inFlight: Promise<RenderedRow[]>[] = [];
    let batch: StagedRow[] = [];
    for (const row of inServedOrder.iterate() as Iterable<StagedRow>) {
      batch.push(row);
      if (batch.length < ROWS_PER_BATCH) continue;
      inFlight.push(renderer.render(batch));
      batch = [];
      if (inFlight.length >= BATCHES_IN_FLIGHT) (await inFlight.shift()!).forEach(write);
    }
    if (batch.length > 0) inFlight.push(renderer.render(batch));
    for (const rendered of inFlight) (await rendered).forEach(write);
    packed.finish();
  } finally {
    await renderer.close();
  }
  writer.onProgress?.(position);
  writer.beforeMemberships?.();
  writeFacetCounts(db, writer, subtreeMembers, taxStatusMembers);
  termMembers.write(db, 'organization_terms (term_position, position_in_term, organization_position)');
  taxonomyMembers.write(db, 'organization_taxonomies (taxonomy_position, position_in_taxonomy, organization_position)');
  subtreeMembers.write(db, 'organization_subtrees (subtree_position, position_in_subtree, organization_position)');
  const insertTaxStatus = db.prepare('INSERT INTO tax_statuses (position, value, organizations) VALUES (?, ?, ?)');
  for (const [value, taxStatus] of taxStatusPositions) insertTaxStatus.run(taxStatus, value, taxStatusMembers.length(taxStatus));
  taxStatusMembers.write(db, 'organization_tax_statuses (tax_status_position, position_in_tax_status, organization_position)');
  writeFacets(db, writer);
  return position;
}

/**
 * Writes the organizations' two forms packed (see packed-documents.ts): the heads as the renderer
 * packed them, with what the publish adds; then the fragments, the renderer's and its own.
 */
class PackedWriter {
  private readonly insertItem: StatementSync;
  private readonly insertDetails: StatementSync;
  private readonly db: DatabaseSync;
  private readonly numbers = new FragmentNumbers(WRITER_FRAGMENTS);
  private readonly packing = new PackingWriter(this.numbers);
  private readonly fragments: [number, string][] = [];

  constructor(db: DatabaseSync) {
    this.db = db;
    this.insertItem = db.prepare('INSERT INTO organization_items (position, json, json_crc) VALUES (?, ?, ?)');
    this.insertDetails = db.prepare('INSERT INTO organization_documents (position, json, json_crc) VALUES (?, ?, ?)');
  }

  add(position: number, rendered: RenderedRow, lastModified: string, readAt: string | undefined): void {
    for (const fragment of rendered.fragments) this.fragments.push(fragment);
    const { item, details } = withTails(this.packing, rendered.packedHeads, lastModified, readAt);
    this.insertItem.run(position, item, documentCheck(item));
    this.insertDetails.run(position, details, documentCheck(details));
  }

  /** Writes the fragments. */
  finish(): void {
    const insertFragment = this.db.prepare('INSERT INTO document_fragments (position, text) VALUES (?, ?)');
    for (const [number, text] of [...this.fragments, ...this.numbers.takeNew()]) insertFragment.run(number, text);
  }
}

/**
 * The organizations of each term (or taxonomy), by position. Organizations arrive in served order,
 * so every list is already sorted, and rows go out in key order: no sort, no random writes. Each list
 * keeps the steps between its positions as variable-length integers (7 bits a byte): 1 to 3 bytes a
 * member, where positions as 4-byte integers, grown by doubling, held 56 MB at 2M organizations.
 */
export class MemberLists {
  private readonly lists = new Map<number, { bytes: Uint8Array; used: number; length: number; last: number }>();

  add(key: number, organizationPosition: number): void {
    let list = this.lists.get(key);
    if (list === undefined) {
      list = { bytes: new Uint8Array(16), used: 0, length: 0, last: 0 };
      this.lists.set(key, list);
    }
    if (list.used + 5 > list.bytes.length) {
      const grown = new Uint8Array(list.bytes.length * 2);
      grown.set(list.bytes);
      list.bytes = grown;
    }
    let step = organizationPosition - list.last;
    list.last = organizationPosition;
    list.length++;
    const { bytes } = list;
    while (step >= 0x80) {
      bytes[list.used++] = (step & 0x7f) | 0x80;
      step >>>= 7;
    }
    bytes[list.used++] = step;
  }

  length(key: number): number {
    return this.lists.get(key)?.length ?? 0;
  }

  /** The keys that have members. */
  keys(): IterableIterator<number> {
    return this.lists.keys();
  }

  /**
   * Inserts (key, 1-based position in the list, organization position) rows into `table (columns)`,
   * in key order, a slice of a list per statement (as a JSON array: one call for thousands of rows).
   */
  write(db: DatabaseSync, tableAndColumns: string): void {
    const insert = db.prepare(`INSERT INTO ${tableAndColumns} SELECT ?, ? + key, value FROM json_each(?)`);
    for (const key of [...this.lists.keys()].sort((a, b) => a - b)) {
      const { bytes, used } = this.lists.get(key)!;
      let slice: number[] = [];
      let start = 1;
      let position = 0;
      for (let at = 0; at < used; ) {
        let step = 0;
        let shift = 0;
        let byte: number;
        do {
          byte = bytes[at++]!;
          step += (byte & 0x7f) * 2 ** shift;
          shift += 7;
        } while (byte >= 0x80);
        slice.push((position += step));
        if (slice.length === ROWS_PER_STATEMENT) {
          insert.run(key, start, JSON.stringify(slice));
          start += slice.length;
          slice = [];
        }
      }
      if (slice.length > 0) insert.run(key, start, JSON.stringify(slice));
    }
    this.lists.clear();
  }
}

/** Rows handed to SQLite per statement as one JSON array: per-row calls cost more than the rows. */
const ROWS_PER_STATEMENT = 10_000;


/**
 * The unfiltered list's facet counts (`facet_counts`), from the membership lists, before they are
 * written: a `GROUP BY` over every organization's facets took 4.7 s at 2M organizations. They are the
 * same counts. A term's ancestors are all of its taxonomy (vocabulary.ts looks parents up within it),
 * so wherever a term is met on a path its facet is its own taxonomy at its own depth, and the
 * organizations counted under it are those of its subtree, each once. An organization has one tax
 * status at most.
 */
function writeFacetCounts(db: DatabaseSync, writer: OrganizationWriter, subtreeMembers: MemberLists, taxStatusMembers: MemberLists): void {
  const insert = db.prepare('INSERT INTO facet_counts (facet, value, organizations) VALUES (?, ?, ?)');
  for (const taxStatus of taxStatusMembers.keys()) insert.run(TAX_STATUS_FACET, taxStatus, taxStatusMembers.length(taxStatus));
  for (const term of writer.termByKey.values()) {
    if (term.taxonomy === undefined) continue;
    const position = writer.termPositions.get(term.id)!;
    const organizations = subtreeMembers.length(position);
    if (organizations > 0) insert.run(termFacet(writer.taxonomyPositions.get(term.taxonomy.code)!, writer.subtreesOf.get(term.id)!.length), position, organizations);
  }
}

/**
 * What each organization is counted under in facets: its tax status, and for each of its terms the
 * term and every ancestor, each at its depth in the tagged term's taxonomy. Made in SQL from the
 * membership lists and a table of each term's facets, once all organizations are written.
 */
function writeFacets(db: DatabaseSync, writer: OrganizationWriter): void {
  db.exec('CREATE TABLE staging.term_facets (term_position INTEGER NOT NULL, facet INTEGER NOT NULL, value INTEGER NOT NULL)');
  const insertTermFacet = db.prepare('INSERT INTO staging.term_facets (term_position, facet, value) VALUES (?, ?, ?)');
  for (const term of writer.termByKey.values()) {
    if (term.taxonomy === undefined) continue;
    const taxonomyPosition = writer.taxonomyPositions.get(term.taxonomy.code)!;
    const path = writer.subtreesOf.get(term.id)!;
    path.forEach((ancestor, index) => insertTermFacet.run(writer.termPositions.get(term.id)!, termFacet(taxonomyPosition, path.length - index), ancestor));
  }
  db.exec(`
    INSERT OR IGNORE INTO organization_facets (position, facet, value)
      SELECT t.organization_position, f.facet, f.value FROM organization_terms t JOIN staging.term_facets f ON f.term_position = t.term_position
      UNION ALL
      SELECT organization_position, ${TAX_STATUS_FACET}, tax_status_position FROM organization_tax_statuses
      ORDER BY 1, 2, 3`);
}
