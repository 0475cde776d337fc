import { hash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { organizationId } from '../hsds/ids.ts';
import { classificationOf, renderOrganization, withoutReadAt } from '../hsds/render.ts';
import type { RenderedTerm, ResolvedTag } from '../hsds/render.ts';
import type { OrganizationIdentifierRecord, OrganizationRecord, TagRecord, UrlRecord } from '../hsds/records.ts';
import { termKey } from '../hsds/records.ts';
import { FragmentNumbers, packedHeads, PackingWriter, RENDERER_FRAGMENTS } from '../store/packed-documents.ts';
import { searchLine } from '../store/search-text.ts';
import type { OrganizationTexts } from '../store/packed-documents.ts';

/**
 * Rendering an organization (its HSDS documents, packed, and its content hash) depends on nothing but
 * its staged row, the vocabulary and the fragments met before it, so it runs on a worker thread beside
 * the one writing SQLite.
 */

/** An organization as staged, in served order, with the links given apart from it (JSON, as SQLite keeps them). */
export interface StagedRow {
  record: string;
  tags: string | null;
  identifiers: string | null;
  urls: string | null;
  /** 1 or 0 when the parent is in the input (published or not), null when it is not. */
  parent_published: number | null;
}

export interface RenderedRow {
  /** The native id served (`external_identifier`): the store keeps it, and carries history by it. */
  externalId: string;
  id: string;
  /** Of the full document before `last_modified` is added, and of a `last_modified` the source gave: equal hashes mean an unchanged organization. */
  contentHash: string;
  /** When the organization last changed, where the source says so (see OrganizationRecord.lastModified). */
  lastModified: string | undefined;
  /** Whether its provenance lacks `read_at`, which the writer adds (see withReadAt). */
  needsReadAt: boolean;
  /** Its provenance's `read_at`, where the source gives one. */
  readAt: string | undefined;
  /**
   * Of the full document less the times a publish may add (`read_at` and `last_modified`), whether the
   * source gave them or not: with those times, what the dataset's version is made of, so that the same
   * documents served make the same version (a copy of this API's feed gives both times).
   */
  servedHash: string;
  /** Its texts packed, but for what the publish adds (see packed-documents.ts packedHeads). */
  packedHeads: OrganizationTexts;
  /** Fragments first met in rendering it, with their numbers. */
  fragments: [number, string][];
  /** Ids of its terms, each once: given, linked, then implied. */
  termIds: string[];
  taxStatus: string | undefined;
  /** Its names, whose words the writing thread makes for the search index as it counts them (see SearchIndexWriter). */
  name: string;
  alternateName: string | undefined;
  /**
   * Its description's words, as the text index holds them (searchLine): made here, as only that index
   * needs them. At 2M synthetic organizations with descriptions they took the writing thread 7.8 s,
   * while this one idled 19 s; names alone (the IRS's) cost it nothing.
   */
  descriptionLine: string;
}

/**
 * Enough of a SHA-1 to tell one organization's versions apart: 72 bits, 12 characters of base64 (all
 * 28 took 5 MB more of the bundled snapshot). A hash kept whole by an older format starts with it.
 */
export const contentHash = (text: string): string => hash('sha1', text, 'base64').slice(0, 12);

/** What rendering needs besides the row: structured-clone data, so that a worker can be given it. */
export interface RenderVocabulary {
  terms: [key: string, term: RenderedTerm][];
  /** Tags implied by a tag of each term (see DatasetInput.impliedTags), where there are any. */
  implied: [key: string, tags: readonly TagRecord[]][];
}

export function vocabularyForRendering(
  termByKey: ReadonlyMap<string, RenderedTerm>,
  impliedTags: ((tag: TagRecord) => readonly TagRecord[]) | undefined,
): RenderVocabulary {
  const implied: RenderVocabulary['implied'] = [];
  if (impliedTags !== undefined) {
    for (const key of termByKey.keys()) {
      const [taxonomy, code] = key.split('\u0000') as [string, string];
      const tags = impliedTags({ taxonomy, code });
      if (tags.length > 0) implied.push([key, tags]);
    }
  }
  return { terms: [...termByKey], implied };
}

/** Renders staged rows, one at a time, with a vocabulary. */
export class RowRenderer {
  private readonly termByKey: Map<string, RenderedTerm>;
  private readonly implied: Map<string, readonly TagRecord[]>;
  private readonly packing: PackingWriter;
  private readonly numbers = new FragmentNumbers(RENDERER_FRAGMENTS);

  constructor(vocabulary: RenderVocabulary) {
    this.termByKey = new Map(vocabulary.terms);
    this.implied = new Map(vocabulary.implied);
    // Each term's objects, shared by every organization it classifies, are a fragment each.
    const whole = new WeakSet<object>();
    for (const term of this.termByKey.values()) whole.add(term.object).add(classificationOf(term));
    this.packing = new PackingWriter(this.numbers, whole);
  }

  render(row: StagedRow): RenderedRow {
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
    const tags = this.resolveTags([...organization.tags, ...linkedTags]);
    const rendered = renderOrganization(record, tags, servedParentId(organization, row.parent_published));
    const needsReadAt = organization.provenance !== undefined && organization.provenance.readAt === undefined;
    const hashed = contentHash(organization.lastModified === undefined ? rendered.detailJson : `${rendered.detailJson}\n${organization.lastModified}`);
    const readAt = organization.provenance?.readAt;
    return {
      externalId: organization.nativeId ?? organization.externalId,
      id: rendered.id,
      contentHash: hashed,
      // Most sources give neither time: then the content hash is of the same text.
      servedHash:
        readAt !== undefined ? contentHash(withoutReadAt(rendered.detailJson, readAt)) : organization.lastModified !== undefined ? contentHash(rendered.detailJson) : hashed,
      lastModified: organization.lastModified,
      needsReadAt,
      readAt,
      packedHeads: packedHeads(this.packing, rendered.listItem, rendered.detail, rendered.id, needsReadAt),
      fragments: this.numbers.takeNew(),
      termIds: tags.map(({ term }) => term.id),
      taxStatus: record.taxStatus,
      name: organization.name,
      alternateName: organization.alternateName,
      descriptionLine: searchLine(organization.description),
    };
  }

  /**
   * Tags in the order given, then the tags they imply, each term once. A repeat of a term only fills in
   * what the first tag of it left out, so an attribute id or label given anywhere is kept.
   */
  private resolveTags(tags: readonly TagRecord[]): ResolvedTag[] {
    const resolved = new Map<string, ResolvedTag>();
    const add = (tag: TagRecord) => {
      const key = termKey(tag.taxonomy, tag.code);
      const first = resolved.get(key);
      if (first === undefined) {
        const { attributeId, label, linkType, value } = tag;
        resolved.set(key, { term: this.termByKey.get(key)!, attributeId, label, linkType, value });
      } else {
        first.attributeId ??= tag.attributeId;
        first.label ??= tag.label;
        first.linkType ??= tag.linkType;
        first.value ??= tag.value;
      }
    };
    tags.forEach(add);
    for (const tag of tags) this.implied.get(termKey(tag.taxonomy, tag.code))?.forEach(add);
    return [...resolved.values()];
  }
}

/**
 * A parent in the input is named only when it is published. One that is not in the input is named as
 * given where references may dangle (an HSDS package may refer to organizations published elsewhere),
 * and left out otherwise.
 */
function servedParentId({ parentExternalId: parent, lenientReferences }: OrganizationRecord, parentPublished: number | null): string | undefined {
  if (parent === undefined) return undefined;
  if (parentPublished === null) return lenientReferences === true ? organizationId(parent) : undefined;
  return parentPublished === 1 ? organizationId(parent) : undefined;
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

/** Renders batches of rows, in order, here or on a worker thread. */
export interface BatchRenderer {
  render(rows: StagedRow[]): Promise<RenderedRow[]>;
  close(): Promise<void>;
}

/** Below this many organizations a worker's start (tens of milliseconds) costs more than it saves. */
const WORKER_FROM_ORGANIZATIONS = 20_000;

/** Whether worker threads pay for writing this many organizations: where a second core can take them, and there are enough. */
export const workersPay = (organizations: number): boolean => organizations >= WORKER_FROM_ORGANIZATIONS && availableParallelism() > 1;

/** Renders on a worker thread (`inWorker`, see workersPay) or this one. */
export function batchRenderer(vocabulary: RenderVocabulary, inWorker: boolean): BatchRenderer {
  if (!inWorker) {
    const renderer = new RowRenderer(vocabulary);
    return { render: async (rows) => rows.map((row) => renderer.render(row)), close: async () => {} };
  }
  return new WorkerRenderer(vocabulary);
}

type WorkerReply = { batch: number; rendered: RenderedRow[] } | { batch: number; error: string };

class WorkerRenderer implements BatchRenderer {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (rows: RenderedRow[]) => void; reject: (error: Error) => void }>();
  private batches = 0;
  private failure: Error | undefined;

  constructor(vocabulary: RenderVocabulary) {
    // Limits that bound the import's memory without starving the worker: at 8 and 32 MB it spent 6.2 of
    // its 16.5 s of the bundled import collecting garbage, and rendering held up the writing.
    this.worker = new Worker(new URL('./render-worker.ts', import.meta.url), { workerData: vocabulary, resourceLimits: { maxYoungGenerationSizeMb: 32, maxOldGenerationSizeMb: 64 } });
    this.worker.on('message', (reply: WorkerReply) => {
      const waiting = this.waiting.get(reply.batch);
      // A batch dropped by close() after the build failed elsewhere (a full disk, say): nobody waits for it.
      if (waiting === undefined) return;
      this.waiting.delete(reply.batch);
      if ('error' in reply) waiting.reject(new Error(`rendering organizations failed: ${reply.error}`));
      else waiting.resolve(reply.rendered);
    });
    const fail = (error: Error) => {
      this.failure = error;
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the rendering worker stopped (exit code ${code})`)));
  }

  render(rows: StagedRow[]): Promise<RenderedRow[]> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const batch = ++this.batches;
    const rendered = new Promise<RenderedRow[]>((resolve, reject) => {
      this.waiting.set(batch, { resolve, reject });
      this.worker.postMessage({ batch, rows });
    });
    // A batch still in flight when an earlier one fails is never awaited: its failure is not unhandled.
    rendered.catch(() => {});
    return rendered;
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the rendering worker was closed');
    // Batches a failed build left in flight are dropped, not failed: nobody waits for them.
    this.waiting.clear();
    await this.worker.terminate();
  }
}
