import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { perImport } from './hsds-datapackage.ts';
import { SPOOL_FILES, SpoolFile, spooledHsdsSource } from './hsds-spool.ts';
import type { ReadContext, Source } from './source.ts';
import { counted } from '../text.ts';
import { DEFAULT_HARVEST } from '../config.ts';
import type { HarvestOptions } from '../config.ts';

/**
 * An HSDS 3.x API as a source (`import https://…/api/hsds/v3`): its taxonomies, terms and
 * organizations, read page by page into files of this import's own (the harvest, hsds-spool.ts), then
 * read as the tables of an HSDS package (hsds-datapackage.ts), so that everything an HSDS file gives is
 * read by the same rules, and the same messages name the URL and the JSON path of each value.
 *
 * - **Paging.** Each list is read at the largest `per_page` the API takes (1000, else 100, 50, 20:
 *   the first answered 200), page after page to its `total_pages`. Organizations are asked for with
 *   `full=true`; an API whose list items are not full (no `attributes` nor `organization_identifiers`)
 *   has each organization read at `/organizations/{id}`. An API that answers every page with its first
 *   (a set of fixed files) is read once, with a note.
 * - **Politeness.** At most `requestsPerSecond` requests a second (0: no limit) and `concurrency` at
 *   once; each request times out after `timeoutMs`. A 429, 502, 503 or 504, a timeout or a refused
 *   connection is tried again, up to RETRIES times, after its Retry-After (at most MAX_RETRY_AFTER_S)
 *   or a wait doubling from `retryDelayMs` (1 s). Any other answer but 200 stops the import, naming the URL.
 * - **A consistent copy.** The dataset may change while it is read. Its version (the root's
 *   `dataset.version`, where the API has one, as this API does) is read before and after, and every
 *   page's `total_items` must be the first page's: when either moves, the harvest starts over, at
 *   most ATTEMPTS times, and then stops with a message. A mix of two versions is never published.
 * - **Memory** holds a few pages at a time: what is read goes to files in a temporary folder, removed
 *   when the import ends.
 * - **A key** some APIs need is given as a header in the environment (HSDS_SOURCE_HEADER, `Name: value`):
 *   sent with every request, never printed.
 */

const PER_PAGE_TRIED = [1000, 100, 50, 20];
const RETRIES = 6;
const MAX_RETRY_AFTER_S = 120;
const ATTEMPTS = 3;
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

/** A problem the harvest cannot go past, at a URL (and a JSON path in its answer). */
export class HarvestError extends Error {
  readonly url: string;
  readonly path: string | undefined;

  constructor(url: string, message: string, path?: string) {
    super(message);
    this.url = url;
    this.path = path;
  }
}

/** The source changed while it was read: start over. */
class SourceChanged extends Error {}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Requests at a polite pace: spaced by 1/rate seconds, a few at once, tried again when the server asks. */
export class PoliteClient {
  readonly options: HarvestOptions;
  private nextStart = 0;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  requests = 0;
  retried = 0;

  constructor(options: HarvestOptions) {
    this.options = options;
  }

  private async slot(): Promise<() => void> {
    if (this.running >= this.options.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    if (this.options.requestsPerSecond > 0) {
      const now = performance.now();
      const start = Math.max(now, this.nextStart);
      this.nextStart = start + 1000 / this.options.requestsPerSecond;
      if (start > now) await sleep(start - now);
    }
    return () => {
      this.running--;
      this.waiting.shift()?.();
    };
  }

  /** The JSON at `url`; undefined for a status in `acceptable` (a 400 or 404 the caller expects). */
  async json(url: string, acceptable: readonly number[] = []): Promise<{ status: number; body: unknown } | undefined> {
    return this.answer(url, acceptable, () => AbortSignal.timeout(this.options.timeoutMs), async (response) => {
      const text = await response.text();
      try {
        return { status: 200, body: JSON.parse(text) as unknown };
      } catch {
        throw new HarvestError(url, `the answer is not JSON (${text.slice(0, 60).replace(/\s+/g, ' ')}…)`);
      }
    });
  }

  /**
   * The 200 answer at `url`, its body still to be read (a long stream): the time allowed covers its
   * head; then `progressed()` is to be called whenever the body makes progress, and the answer is aborted
   * when none comes for as long.
   */
  async stream(url: string, acceptable: readonly number[] = []): Promise<{ response: Response; progressed: () => void; done: () => void } | undefined> {
    let abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(new DOMException('no answer in time', 'TimeoutError')), this.options.timeoutMs);
    };
    const answer = await this.answer(url, acceptable, () => {
      abort = new AbortController();
      arm();
      return abort.signal;
    }, async (response) => ({ response, progressed: arm, done: () => clearTimeout(timer) }));
    if (answer === undefined) clearTimeout(timer);
    return answer;
  }

  /** Asks until an answer is final: `ok` makes what a 200 gives; retried statuses and errors are asked again (see above). */
  private async answer<T>(url: string, acceptable: readonly number[], signal: () => AbortSignal, ok: (response: Response) => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; ; attempt++) {
      const release = await this.slot();
      let wait: number | undefined;
      try {
        this.requests++;
        const headers: Record<string, string> = { accept: 'application/json' };
        if (this.options.header !== undefined) headers[this.options.header.name] = this.options.header.value;
        const response = await fetch(url, { headers, signal: signal(), redirect: 'follow' });
        if (response.status === 200) return await ok(response);
        await response.body?.cancel();
        if (acceptable.includes(response.status)) return undefined;
        if (!RETRIED_STATUSES.has(response.status)) throw new HarvestError(url, `answered ${response.status} ${response.statusText}`);
        if (attempt >= RETRIES) throw new HarvestError(url, `answered ${response.status} ${response.statusText} ${RETRIES + 1} times`);
        const asked = retryAfter(response.headers.get('retry-after'));
        wait = asked === undefined ? 2 ** attempt * this.options.retryDelayMs : asked * 1000;
      } catch (error) {
        if (error instanceof HarvestError) throw error;
        if (attempt >= RETRIES) throw new HarvestError(url, `${describeFetchError(error)} (tried ${RETRIES + 1} times)`);
        wait = 2 ** attempt * this.options.retryDelayMs;
      } finally {
        release();
      }
      this.retried++;
      await sleep(Math.min(wait, MAX_RETRY_AFTER_S * 1000));
    }
  }
}

/** Retry-After in seconds (a number of seconds, or an HTTP date). */
function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** What went wrong with a request that got no answer, in words (with the system's code). */
const FETCH_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection closed before an answer',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
};

export function describeFetchError(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'no answer in time';
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  if (code !== undefined) return FETCH_ERRORS[code] === undefined ? code : `${FETCH_ERRORS[code]} (${code})`;
  return cause?.message ?? String(error);
}

interface Harvested {
  folder: string;
  organizations: number;
  taxonomies: number;
  terms: number;
  requests: number;
  retried: number;
  notes: string[];
}

/** The base URL without a trailing slash. */
const baseOf = (url: string): string => url.replace(/\/+$/, '');

function withQuery(url: string, query: Record<string, string | number>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(query)) target.searchParams.set(name, String(value));
  return target.toString();
}

/** Reads the whole API into `folder`; throws SourceChanged when its dataset moves meanwhile. */
async function harvestOnce(base: string, client: PoliteClient, folder: string, notes: string[], onItems?: (items: number) => void): Promise<Omit<Harvested, 'folder' | 'requests' | 'retried' | 'notes'>> {
  const versionOf = async (): Promise<string | undefined> => {
    const root = await client.json(`${base}/`, [404]);
    const dataset = isObject(root?.body) ? root.body.dataset : undefined;
    return isObject(dataset) && typeof dataset.version === 'string' ? dataset.version : undefined;
  };
  const before = await versionOf();

  /** Every item of a list, written in order; the detail of each organization when the list's are not full. */
  /** `detail`: where an item's full document is, when the list's is not full (its URL and path, and the document). */
  async function list(path: string, file: SpoolFile, query: Record<string, string | number>, detail?: (item: Json) => Promise<{ url: string; at: string; item: Json }>): Promise<void> {
    let perPage: number | undefined;
    let first: Json | undefined;
    let firstUrl = '';
    for (const size of PER_PAGE_TRIED) {
      firstUrl = withQuery(`${base}${path}`, { ...query, per_page: size, page: 1 });
      const answer = await client.json(firstUrl, [400, 422]);
      if (answer === undefined) continue;
      if (!isObject(answer.body)) throw new HarvestError(firstUrl, 'the answer is not an HSDS page (a JSON object with contents)');
      perPage = size;
      first = answer.body;
      break;
    }
    if (first === undefined || perPage === undefined) throw new HarvestError(`${base}${path}`, `refused every per_page tried (${PER_PAGE_TRIED.join(', ')})`);
    const totalItems = first.total_items;
    const totalPages = typeof first.total_pages === 'number' && first.total_pages >= 1 ? first.total_pages : 1;
    const pageItems = async (url: string, page: Json): Promise<unknown[]> => {
      if (!Array.isArray(page.contents)) throw new HarvestError(url, 'not a list', '$.contents');
      if (page.total_items !== totalItems) throw new SourceChanged(`${url}: total_items is ${String(page.total_items)}, was ${String(totalItems)} on the first page`);
      return page.contents;
    };
    const write = async (url: string, items: unknown[]) => {
      for (const [index, item] of items.entries()) {
        if (!isObject(item) || typeof item.id !== 'string' || item.id === '') throw new HarvestError(url, 'an item without an id', `$.contents[${index}].id`);
      }
      // The details of a page's items are read a few at once (the client's limit), then all written in order.
      const read = detail === undefined ? items.map((item) => ({ url, at: '', item: item as Json })) : await Promise.all(items.map((item) => detail(item as Json)));
      for (const [index, entry] of read.entries()) {
        if (entry.at === '') await file.write(url, `$.contents[${index}]`, entry.item);
        else await file.write(entry.url, entry.at, entry.item);
      }
      onItems?.(taxonomies.count + terms.count + organizations.count);
    };
    // Pages are read a few at once and written in order.
    const fetchPage = async (page: number): Promise<{ url: string; items: unknown[] }> => {
      const url = withQuery(`${base}${path}`, { ...query, per_page: perPage, page });
      const answer = await client.json(url);
      if (!isObject(answer?.body)) throw new HarvestError(url, 'the answer is not an HSDS page (a JSON object with contents)');
      if (typeof answer.body.page_number === 'number' && answer.body.page_number !== page) throw new FixedPages(url);
      return { url, items: await pageItems(url, answer.body) };
    };
    await write(firstUrl, await pageItems(firstUrl, first));
    const window: Array<Promise<{ url: string; items: unknown[] }>> = [];
    let next = 2;
    const fill = () => {
      while (window.length < client.options.concurrency && next <= totalPages) {
        const promise = fetchPage(next++);
        promise.catch(() => {});
        window.push(promise);
      }
    };
    try {
      fill();
      while (window.length > 0) {
        const { url, items } = await window.shift()!;
        await write(url, items);
        fill();
      }
    } catch (error) {
      if (!(error instanceof FixedPages)) throw error;
      notes.push(`${error.url}: the API answered page 1 when asked for another: it serves fixed pages, read once (${counted(file.count, 'item')} of the ${String(totalItems)} its first page counts)`);
    }
  }

  const folderFile = (name: string) => new SpoolFile(join(folder, name));
  const taxonomies = folderFile(SPOOL_FILES.taxonomies);
  const terms = folderFile(SPOOL_FILES.terms);
  const organizations = folderFile(SPOOL_FILES.organizations);
  try {
    await list('/taxonomies', taxonomies, {});
    await list('/taxonomy_terms', terms, {});
    let listIsFull: boolean | undefined;
    await list('/organizations', organizations, { full: 'true' }, async (item) => {
      // Whether the list gives full documents is decided by its first item, for all of them.
      listIsFull ??= Array.isArray(item.attributes) || Array.isArray(item.organization_identifiers);
      if (listIsFull) return { url: '', at: '', item };
      const url = `${base}/organizations/${encodeURIComponent(item.id as string)}`;
      const answer = await client.json(url);
      if (!isObject(answer?.body)) throw new HarvestError(url, 'the answer is not an organization (a JSON object)');
      return { url, at: '$', item: answer.body };
    });
  } finally {
    await Promise.all([taxonomies.close(), terms.close(), organizations.close()]);
  }
  const after = await versionOf();
  if (before !== after) throw new SourceChanged(`its dataset version changed from ${before} to ${after} while it was read`);
  return { organizations: organizations.count, taxonomies: taxonomies.count, terms: terms.count };
}

class FixedPages extends Error {
  readonly url: string;
  constructor(url: string) {
    super(url);
    this.url = url;
  }
}

/** Reads the API into a new temporary folder, starting over when its dataset changes meanwhile. */
async function harvest(base: string, options: HarvestOptions, onItems?: (items: number) => void): Promise<Harvested> {
  const client = new PoliteClient(options);
  const notes: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const folder = mkdtempSync(join(tmpdir(), 'hsds-harvest-'));
    try {
      const counts = await harvestOnce(base, client, folder, notes, onItems);
      return { folder, ...counts, requests: client.requests, retried: client.retried, notes };
    } catch (error) {
      rmSync(folder, { recursive: true, force: true });
      if (!(error instanceof SourceChanged)) throw error;
      if (attempt >= ATTEMPTS) throw new HarvestError(base, `the dataset changed while it was read, ${ATTEMPTS} times in a row (last: ${error.message})`);
      notes.push(`${base}: the dataset changed while it was read (${error.message}); read again from the start`);
    }
  }
}

/** An HSDS API, read once per import (see above). */
export function hsdsApiSource(url: string, options: HarvestOptions = DEFAULT_HARVEST): Source {
  const base = baseOf(url);
  let folder: string | undefined;

  const readable = perImport(async (context: ReadContext): Promise<boolean> => {
    try {
      const harvested = await harvest(base, options, context.onItems);
      folder = harvested.folder;
      for (const note of harvested.notes) context.diagnostics.note('HSDS API read with a note', { file: base }, note);
      context.diagnostics.note(
        'HSDS API read',
        { file: base },
        `read ${counted(harvested.organizations, 'organization')}, ${counted(harvested.taxonomies, 'taxonomy', 'taxonomies')} and ${counted(harvested.terms, 'taxonomy term')} in ${counted(harvested.requests, 'request')}` +
          (harvested.retried > 0 ? ` (${harvested.retried} tried again)` : ''),
      );
      return true;
    } catch (error) {
      if (!(error instanceof HarvestError)) throw error;
      context.diagnostics.error({ file: error.url, field: error.path }, error.message);
      return false;
    }
  });

  const source = spooledHsdsSource('hsds-api', base, async (context) => ((await readable(context)) ? folder : undefined));
  return {
    ...source,
    close: () => {
      if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    },
  };
}
