import type { DatabaseSync } from 'node:sqlite';
import { isUuid, organizationId } from '../hsds/ids.ts';
import type { RenderedTerm } from '../hsds/render.ts';
import type { DatasetInput, OrganizationIdentifierRecord, OrganizationRecord, SourceLocation, TagRecord, UrlRecord } from '../hsds/records.ts';
import { formatLocation } from '../sources/files/diagnostics.ts';
import type { Diagnostics } from '../sources/files/diagnostics.ts';
import { termKey } from '../hsds/records.ts';

/**
 * Scratch tables of a build, in an attached temporary database: the input as read, in the order read
 * (organizations are indexed by native id once all are in), before it is checked, joined and written
 * in served order.
 */
export const STAGING_TABLES = `
  CREATE TABLE staging.organizations (
    external_id TEXT NOT NULL, sort_key TEXT NOT NULL, published INTEGER NOT NULL, parent TEXT, record TEXT NOT NULL, source_index INTEGER NOT NULL
  );
  CREATE TABLE staging.tags (external_id TEXT NOT NULL, taxonomy TEXT NOT NULL, code TEXT NOT NULL, attribute_id TEXT, label TEXT, link_type TEXT, value TEXT, at TEXT, lenient INTEGER NOT NULL);
  CREATE TABLE staging.urls (external_id TEXT NOT NULL, record TEXT NOT NULL, at TEXT, lenient INTEGER NOT NULL);
  CREATE TABLE staging.identifiers (external_id TEXT NOT NULL, record TEXT NOT NULL, at TEXT, lenient INTEGER NOT NULL);
`;

/** Native ids that are UUIDs name the same organization in any letter case. */
const stagingKey = (externalId: string): string => (isUuid(externalId) ? externalId.toLowerCase() : externalId);

const PROGRESS_EVERY = 10_000;

/**
 * Organizations are served by name (case-insensitive, by code point), then by native id: the one
 * served, which a source may give apart from the id it links by (see OrganizationRecord.nativeId).
 */
const organizationSortKey = (organization: OrganizationRecord): string => `${organization.name.normalize('NFKC').toLowerCase()}\u0000${stagingKey(organization.nativeId ?? organization.externalId)}`;

/**
 * Reads the input's organizations and the links given apart from them into the staging tables, and
 * checks them: ids defined twice, links and parents naming no organization, parent cycles, ids that
 * collide. Problems go to `diagnostics`. `onProgress` is called every few thousand organizations and
 * once at the end.
 */
export async function stageInput(
  db: DatabaseSync,
  input: DatasetInput,
  termByKey: ReadonlyMap<string, RenderedTerm>,
  diagnostics: Diagnostics,
  onProgress?: (read: number) => void,
): Promise<{ published: number; unpublished: number }> {
  const staged = await stageOrganizations(db, input, termByKey, diagnostics, onProgress);
  checkLinks(db, diagnostics);
  if (staged.withParent > 0) checkParentCycles(db, diagnostics);
  return { published: staged.published, unpublished: staged.unpublished };
}

const locationText = (at: SourceLocation | undefined): string | null => (at === undefined ? null : JSON.stringify(at));
const locationOf = (text: string | null): SourceLocation => (text === null ? { file: '(input)' } : (JSON.parse(text) as SourceLocation));

/** A tag naming a term that is not in the input is left out: with a warning where references may dangle, else an error. */
function knownTerm(tag: TagRecord, at: SourceLocation | undefined, lenient: boolean | undefined, termByKey: ReadonlyMap<string, RenderedTerm>, diagnostics: Diagnostics): boolean {
  if (termByKey.has(termKey(tag.taxonomy, tag.code))) return true;
  // The location names the organization's column; the message says which term.
  const where = { file: '(input)', ...at, field: undefined };
  if (lenient === true) diagnostics.danglingReference(where, `tag ${tag.taxonomy}:${tag.code} names no term of the input; left out`, 'tag naming a term not in the input');
  else diagnostics.danglingReference(where, `tag ${tag.taxonomy}:${tag.code} names no known taxonomy term`);
  return false;
}

async function stageOrganizations(
  db: DatabaseSync,
  input: DatasetInput,
  termByKey: ReadonlyMap<string, RenderedTerm>,
  diagnostics: Diagnostics,
  onProgress: ((read: number) => void) | undefined,
) {
  const stage = db.prepare('INSERT INTO staging.organizations (external_id, sort_key, published, parent, record, source_index) VALUES (?, ?, ?, ?, ?, ?)');
  let read = 0;
  let published = 0;
  let withParent = 0;
  // Whether any native id is a version-5 UUID (see checkIdCollisions): counted, not kept, since a
  // copy of another instance has one for each of its organizations (a map of them held 1.4 GB at 2M).
  let version5Ids = 0;
  for await (const organization of input.organizations) {
    if (++read % PROGRESS_EVERY === 0) onProgress?.(read);
    const tags = organization.tags.filter((tag) => knownTerm(tag, { file: '(input)', ...organization.at, field: 'tags' }, organization.lenientReferences, termByKey, diagnostics));
    const isPublished = organization.status === 'published';
    const parent = organization.parentExternalId === undefined ? null : stagingKey(organization.parentExternalId);
    const key = stagingKey(organization.externalId);
    stage.run(key, organizationSortKey(organization), isPublished ? 1 : 0, parent, JSON.stringify({ ...organization, tags }), organization.sourceIndex ?? 0);
    if (isPublished) published++;
    if (parent !== null) withParent++;
    if (isUuid(key) && key[14] === '5') version5Ids++;
  }
  onProgress?.(read);
  const duplicates = removeDuplicates(db, diagnostics);
  published -= duplicates.published;
  withParent -= duplicates.withParent;

  const lenient = (link: { lenientReferences?: boolean }): number => (link.lenientReferences === true ? 1 : 0);
  const stageTag = db.prepare('INSERT INTO staging.tags (external_id, taxonomy, code, attribute_id, label, link_type, value, at, lenient) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  for await (const link of input.tags ?? []) {
    if (!knownTerm(link, link.at, link.lenientReferences, termByKey, diagnostics)) continue;
    const { attributeId, label, linkType, value } = link;
    stageTag.run(stagingKey(link.organization), link.taxonomy, link.code, attributeId ?? null, label ?? null, linkType ?? null, value ?? null, locationText(link.at), lenient(link));
  }
  const stageIdentifier = db.prepare('INSERT INTO staging.identifiers (external_id, record, at, lenient) VALUES (?, ?, ?, ?)');
  for await (const link of input.identifiers ?? []) {
    const record: OrganizationIdentifierRecord = { scheme: link.scheme, type: link.type, identifier: link.identifier, id: link.id };
    stageIdentifier.run(stagingKey(link.organization), JSON.stringify(record), locationText(link.at), lenient(link));
  }
  const stageUrl = db.prepare('INSERT INTO staging.urls (external_id, record, at, lenient) VALUES (?, ?, ?, ?)');
  for await (const link of input.urls ?? []) {
    const record: UrlRecord = { url: link.url, label: link.label, id: link.id };
    stageUrl.run(stagingKey(link.organization), JSON.stringify(record), locationText(link.at), lenient(link));
  }
  for (const table of LINK_TABLES) db.exec(`CREATE INDEX staging.${table}_by_organization ON ${table} (external_id)`);
  const shared = removeSharedIdentifiers(db, diagnostics);
  published -= shared.published;
  withParent -= shared.withParent;
  if (version5Ids > 0) checkIdCollisions(db, diagnostics);
  return { published, unpublished: read - published - shared.published - shared.unpublished, withParent };
}

/**
 * Rows are staged in the order read, and indexed by native id after: inserting into a table keyed by
 * id put each IRS state file's rows all over the one before (1.8 s of inserts for the bundled
 * dataset, against 0.6 s in order). An organization defined twice is left out at its second
 * definition: an error within one source, a warning (an overlap, see OVERLAP) when the second is in a
 * later source. Returns how many of those were published or had a parent.
 */
function removeDuplicates(db: DatabaseSync, diagnostics: Diagnostics): { published: number; withParent: number } {
  db.exec('CREATE INDEX staging.organizations_by_id ON organizations (external_id)');
  const repeats = db.prepare(`
    SELECT o.rowid AS row, o.external_id, o.record, o.published, o.parent IS NOT NULL AS has_parent, o.source_index, f.record AS first_record, f.source_index AS first_source
    FROM (SELECT external_id, min(rowid) AS first FROM staging.organizations GROUP BY external_id HAVING count(*) > 1) d
      JOIN staging.organizations o ON o.external_id = d.external_id AND o.rowid <> d.first
      JOIN staging.organizations f ON f.rowid = d.first
    ORDER BY o.rowid`);
  const remove = db.prepare('DELETE FROM staging.organizations WHERE rowid = ?');
  const removed = { published: 0, withParent: 0 };
  type Repeat = { row: number; external_id: string; record: string; published: number; has_parent: number; source_index: number; first_record: string; first_source: number };
  for (const repeat of repeats.all() as Repeat[]) {
    remove.run(repeat.row);
    removed.published += repeat.published;
    removed.withParent += repeat.has_parent;
    const { at, provenance } = JSON.parse(repeat.record) as OrganizationRecord;
    const first = JSON.parse(repeat.first_record) as OrganizationRecord;
    const firstAt = first.at === undefined ? '' : ` (first at ${formatLocation({ ...first.at, field: undefined })})`;
    if (repeat.source_index === repeat.first_source) diagnostics.error({ file: '(input)', ...at, field: 'id' }, `organization ${repeat.external_id} is defined twice${firstAt}`);
    else diagnostics.warning(OVERLAP, { file: '(input)', ...at, field: 'id' }, `organization ${repeat.external_id} is also in ${describeSource(first)}${firstAt}, listed first: that one is served, this one is left out (${describeSource({ provenance })})`);
  }
  return removed;
}

/** The kind of warning for an organization that two sources hold (the first source listed wins; docs/exchange.md). */
const OVERLAP = 'organization in two sources (the first listed is served)';

const describeSource = ({ provenance }: Pick<OrganizationRecord, 'provenance'>): string =>
  provenance === undefined ? 'another source' : `${provenance.source} (${provenance.location})`;

/**
 * Organizations of different sources that share an identifier (the same scheme and value, as an EIN
 * is `US-EIN`): the same organization, held twice. The one from the first source listed is served;
 * each other is left out, with its links, and a warning naming both. Only looked for when more than
 * one source gives organizations. Returns how many left out were published, unpublished, with a parent.
 */
function removeSharedIdentifiers(db: DatabaseSync, diagnostics: Diagnostics): { published: number; unpublished: number; withParent: number } {
  const removed = { published: 0, unpublished: 0, withParent: 0 };
  const { sources } = db.prepare('SELECT count(DISTINCT source_index) AS sources FROM staging.organizations').get() as { sources: number };
  if (sources < 2) return removed;
  db.exec(`
    CREATE TABLE staging.identifier_keys AS
      SELECT o.external_id, o.source_index, lower(coalesce(json_extract(i.value, '$.scheme'), '')) AS scheme, json_extract(i.value, '$.identifier') AS identifier
        FROM staging.organizations o, json_each(o.record, '$.identifiers') i
      UNION
      SELECT o.external_id, o.source_index, lower(coalesce(json_extract(l.record, '$.scheme'), '')), json_extract(l.record, '$.identifier')
        FROM staging.identifiers l JOIN staging.organizations o ON o.external_id = l.external_id;
    CREATE INDEX staging.identifier_keys_by_key ON identifier_keys (scheme, identifier);
  `);
  const overlaps = db.prepare(`
    SELECT k.external_id, k.scheme, k.identifier, w.external_id AS kept_id FROM staging.identifier_keys k
      JOIN (SELECT scheme, identifier, min(source_index) AS first FROM staging.identifier_keys GROUP BY scheme, identifier HAVING count(DISTINCT source_index) > 1) g
        ON g.scheme = k.scheme AND g.identifier = k.identifier AND k.source_index > g.first
      JOIN staging.identifier_keys w ON w.scheme = k.scheme AND w.identifier = k.identifier AND w.source_index = g.first
    GROUP BY k.external_id ORDER BY k.external_id`);
  const recordOf = db.prepare('SELECT record, published, parent IS NOT NULL AS has_parent FROM staging.organizations WHERE external_id = ?');
  for (const overlap of overlaps.all() as Array<{ external_id: string; scheme: string; identifier: string; kept_id: string }>) {
    const row = recordOf.get(overlap.external_id) as { record: string; published: number; has_parent: number } | undefined;
    if (row === undefined) continue;
    const kept = recordOf.get(overlap.kept_id) as { record: string } | undefined;
    const record = JSON.parse(row.record) as OrganizationRecord;
    const keptRecord = kept === undefined ? {} : (JSON.parse(kept.record) as OrganizationRecord);
    const shown = overlap.scheme === '' ? overlap.identifier : `${overlap.scheme.toUpperCase()} ${overlap.identifier}`;
    diagnostics.warning(
      OVERLAP,
      { file: '(input)', ...record.at, field: 'organization_identifiers' },
      `organization ${overlap.external_id} has identifier ${shown}, as organization ${overlap.kept_id} of ${describeSource(keptRecord)}, listed first: that one is served, this one is left out (${describeSource(record)})`,
    );
    db.prepare('DELETE FROM staging.organizations WHERE external_id = ?').run(overlap.external_id);
    for (const table of LINK_TABLES) db.prepare(`DELETE FROM staging.${table} WHERE external_id = ?`).run(overlap.external_id);
    if (row.published === 1) removed.published++;
    else removed.unpublished++;
    removed.withParent += row.has_parent;
  }
  return removed;
}

/**
 * A native id that is a version-5 UUID is served as is, so it could equal the id derived from another
 * organization's native id. Only when there is one are derived ids computed, and looked up among the
 * native ids (most HSDS sources use random, version-4 UUIDs; a copy of another instance of this API
 * has the version-5 ids it derived, and no other ids to derive from).
 */
function checkIdCollisions(db: DatabaseSync, diagnostics: Diagnostics): void {
  const holder = db.prepare('SELECT record FROM staging.organizations WHERE external_id = ?');
  for (const { external_id: externalId } of db.prepare('SELECT external_id FROM staging.organizations').iterate() as Iterable<{ external_id: string }>) {
    if (isUuid(externalId)) continue;
    const derived = organizationId(externalId);
    const taken = holder.get(derived) as { record: string } | undefined;
    if (taken !== undefined) {
      const { at } = JSON.parse(taken.record) as OrganizationRecord;
      diagnostics.error({ file: '(input)', ...at, field: 'id' }, `id ${derived} is also the id this API derives for organization ${externalId}; give one of them another id`);
    }
  }
}

/** Rows given apart from their organization, each in a staging table keyed by the organization's native id. */
const LINK_TABLES = ['tags', 'identifiers', 'urls'] as const;

const LINK_NOUNS: Record<(typeof LINK_TABLES)[number], string> = { tags: 'tag', identifiers: 'identifier', urls: 'website' };

/**
 * A link to an organization that is not in the input has nowhere to be served: where references may
 * dangle (HSDS packages) it is left out with a warning, else it is an error. A parent that is not in
 * the input is a warning: served as given where references may dangle, else left out.
 */
function checkLinks(db: DatabaseSync, diagnostics: Diagnostics): void {
  for (const table of LINK_TABLES) {
    const orphans = db.prepare(
      `SELECT l.external_id, l.at, l.lenient FROM staging.${table} l WHERE NOT EXISTS (SELECT 1 FROM staging.organizations o WHERE o.external_id = l.external_id)`,
    );
    for (const row of orphans.iterate() as Iterable<{ external_id: string; at: string | null; lenient: number }>) {
      const at = locationOf(row.at);
      if (row.lenient === 1) diagnostics.danglingReference(at, `is linked to organization ${row.external_id}, which is not in the input; left out`, `${LINK_NOUNS[table]} of an organization not in the input`);
      else diagnostics.danglingReference(at, `names organization ${row.external_id}, which is not in the input`);
    }
  }
  const missingParents = db.prepare(
    `SELECT o.parent, o.record FROM staging.organizations o WHERE o.parent IS NOT NULL AND NOT EXISTS (SELECT 1 FROM staging.organizations p WHERE p.external_id = o.parent)`,
  );
  for (const row of missingParents.iterate() as Iterable<{ parent: string; record: string }>) {
    const { at, parentField, lenientReferences } = JSON.parse(row.record) as OrganizationRecord;
    const outcome = lenientReferences === true ? 'served as given' : 'left out';
    diagnostics.danglingReference({ file: '(input)', ...at, field: parentField ?? 'parent_id' }, `parent ${row.parent} is not in the input; ${outcome}`, 'parent organization not in the input');
  }
}

/** Ids of a cycle as printed: all of a short one, the start of a long one. */
function describeCycle(first: readonly string[], length: number): string {
  return length <= CYCLE_IDS_SHOWN ? [...first, first[0]!].join(' → ') : `${first.join(' → ')} → … (${length} organizations in all)`;
}

const CYCLE_IDS_SHOWN = 5;

/**
 * HSDS parent links form a tree, so a chain of parents that comes back to where it started is an
 * error (served, it would send a client that follows parents round for ever). Only organizations with
 * a parent can be in a cycle: they are numbered (in the staging database), their parents' numbers read
 * into an array (4 bytes each), and each chain walked once in memory, every organization on it marked
 * with the walk's number; meeting a mark of the same walk closes a cycle. (Walking in SQL, a lookup
 * per step, was four times slower.)
 */
function checkParentCycles(db: DatabaseSync, diagnostics: Diagnostics): void {
  // Numbered from 1 in key order, the rowid; 0 stands for no parent.
  db.exec(`
    CREATE TABLE staging.with_parent (n INTEGER PRIMARY KEY, external_id TEXT NOT NULL UNIQUE, parent TEXT NOT NULL);
    INSERT INTO staging.with_parent (external_id, parent)
      SELECT external_id, parent FROM staging.organizations WHERE parent IS NOT NULL ORDER BY external_id;
  `);
  const { count } = db.prepare('SELECT count(*) AS count FROM staging.with_parent').get() as { count: number };
  // The number of each one's parent; 0 when the parent has no parent itself (or is not in the input): there the chain ends.
  const parentOf = new Int32Array(count + 1);
  const parents = db.prepare('SELECT c.n, p.n FROM staging.with_parent c JOIN staging.with_parent p ON p.external_id = c.parent');
  parents.setReturnArrays(true);
  for (const [child, parent] of parents.iterate() as Iterable<[number, number]>) parentOf[child] = parent;

  const idOf = db.prepare('SELECT external_id FROM staging.with_parent WHERE n = ?');
  const recordOf = db.prepare('SELECT record FROM staging.organizations WHERE external_id = ?');
  const walkOf = new Int32Array(count + 1);
  let walk = 0;
  for (let start = 1; start <= count; start++) {
    if (walkOf[start] !== 0) continue;
    walk++;
    let node = start;
    while (node !== 0 && walkOf[node] === 0) {
      walkOf[node] = walk;
      node = parentOf[node]!;
    }
    if (node === 0 || walkOf[node] !== walk) continue;
    const first: string[] = [];
    let length = 0;
    let member = node;
    do {
      if (first.length < CYCLE_IDS_SHOWN) first.push((idOf.get(member) as { external_id: string }).external_id);
      length++;
      member = parentOf[member]!;
    } while (member !== node);
    const { at, parentField } = JSON.parse((recordOf.get(first[0]!) as { record: string }).record) as OrganizationRecord;
    const reason = length === 1 ? `organization ${first[0]} names itself as its parent` : `organizations ${describeCycle(first, length)} are each other's parents`;
    diagnostics.error({ file: '(input)', ...at, field: parentField ?? 'parent_id' }, `${reason}; parent links must form a tree`);
  }
}
