import { compressBuffer } from './encoding.ts';
import type { ContentCoding } from './encoding.ts';

/** No one entry may take more than this share of the cache. */
const MAX_ENTRY_SHARE = 16;
/** Rough per-entry overhead beyond the bodies and the target: the Map and Set slots, the object. */
const ENTRY_OVERHEAD = 200;
/** Rough size of an entry's answer before Fastify in one coding: two header objects (see HitAnswer). */
const HIT_ANSWER_OVERHEAD = 600;

/**
 * The body in memory of its own, so that the bytes counted are the bytes kept. Bodies under 32 KiB
 * are usually views into a shared 64 KiB slab (Buffer.from(string) and zlib's output both draw from
 * Node's buffer pool): keeping such a view keeps its whole slab alive. Kept as views, bodies
 * counted as 64 MiB held 355 to 430 MB outside the V8 heap under load; copied, about 80 MB
 * (bench/soak.ts, 256 connections).
 */
function ownMemory(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
  const copy = Buffer.allocUnsafeSlow(body.byteLength);
  body.copy(copy);
  return copy;
}

/**
 * How a hit answered before Fastify is sent in one coding: its validators, its body, and its head as a
 * 200 and as a 304, made once (an entry belongs to one dataset version and link origin, and so do its
 * validators). The heads' x-request-id is set for each request just before it is written.
 */
export interface HitAnswer {
  etag: string;
  lastModified: string;
  body: Buffer;
  ok: Record<string, string | number>;
  notModified: Record<string, string | number>;
}

export class CachedResponse {
  /** Where the cache holds it (see ResponseCache). */
  readonly scope: string;
  readonly target: string;
  readonly contentType: string;
  /** Headers of the route that describe the representation, sent again with every hit. */
  readonly headers: Record<string, string>;
  /** The route that made it, by its pattern (for /metrics). */
  readonly route: string;
  private readonly bodies: Partial<Record<ContentCoding, Buffer>>;
  bytes: number;
  /** ResponseCache's count of insertions when this entry was last put at the end of its order. */
  insertedAt = 0;
  /** Its answers before Fastify, by coding (see keepHitAnswer). */
  readonly hitAnswers: Partial<Record<ContentCoding, HitAnswer>> = {};

  constructor(scope: string, target: string, contentType: string, headers: Record<string, string>, identity: Buffer, route: string) {
    this.scope = scope;
    this.target = target;
    this.contentType = contentType;
    this.headers = headers;
    this.route = route;
    this.bodies = { identity: ownMemory(identity) };
    this.bytes = identity.length + target.length + ENTRY_OVERHEAD;
  }

  /** The body in a coding, compressed once, the first time it is asked for; returns the bytes added too. */
  body(coding: ContentCoding): { body: Buffer; added: number } {
    const known = this.bodies[coding];
    if (known !== undefined) return { body: known, added: 0 };
    const body = ownMemory(compressBuffer(this.bodies.identity!, coding as Exclude<ContentCoding, 'identity'>));
    this.bodies[coding] = body;
    this.bytes += body.length;
    return { body, added: body.length };
  }

  /** Keeps its answer before Fastify in a coding; returns the bytes that adds. */
  keepHitAnswer(coding: ContentCoding, answer: HitAnswer): number {
    this.hitAnswers[coding] = answer;
    this.bytes += HIT_ANSWER_OVERHEAD;
    return HIT_ANSWER_OVERHEAD;
  }
}

/**
 * What a response depends on besides its target: the dataset version, the link origin and, for a
 * route with more than one form, the form. Made once for the same three (a request's version and
 * origin are the same strings every time), so that looking it up hashes nothing new.
 */
export class Scopes {
  private last = { version: '', origin: '', representation: '', scope: '\n\n' };

  of(version: string, origin: string, representation: string): string {
    const last = this.last;
    if (last.version === version && last.origin === origin && last.representation === representation) return last.scope;
    this.last = { version, origin, representation, scope: `${version}\n${origin}\n${representation}` };
    return this.last.scope;
  }
}

/**
 * Finished responses, kept in memory and sent again without touching the store or rendering
 * anything. An entry is keyed by the dataset version, the link origin and the normalised request
 * target, so a publish makes every older entry unreachable (and the first response of the new
 * version drops them). Each entry holds the identity body and, made the first time a client asks
 * for them, its brotli and gzip forms: a hot response is never compressed twice.
 *
 * Only successful, cacheable buffered responses are kept (plugins/app/http-caching.ts); streams
 * are not. The cache is bounded in bytes and evicts the least recently used entries.
 */
export class ResponseCache {
  /** Entries by scope (see Scopes), then by normalised target. */
  private readonly scopes = new Map<string, Map<string, CachedResponse>>();
  /** Every entry, least recently used first: a Set keeps insertion order, and eviction takes the first. */
  private readonly order = new Set<CachedResponse>();
  private bytes = 0;
  private publishedAt = '';

  readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.order.size, bytes: this.bytes };
  }

  /** Lookups answered from the cache, and not, since the server started (for /metrics). */
  hits = 0;
  misses = 0;
  /** Entries put at the end of the order so far: how many at most stand behind an entry (see get). */
  private insertions = 0;

  /** `countMiss`: false where a miss is looked up again (see answerHit), so that it counts once. */
  get(scope: string, target: string, countMiss = true): CachedResponse | undefined {
    const entry = this.scopes.get(scope)?.get(target);
    if (entry === undefined) {
      if (countMiss) this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last. An entry still in the newer half of the order stays where it is: a
    // hot entry is not moved on every hit. Moving it is what costs: a Set that has an entry deleted
    // and added again for every hit makes its table anew every so often, in V8's old space, and
    // at 30,000 hits a second that was a mark-compact every 2 to 3 seconds.
    const behind = this.insertions - entry.insertedAt - 1;
    if (behind * 2 >= this.order.size) {
      this.order.delete(entry);
      this.order.add(entry);
      entry.insertedAt = this.insertions++;
    }
    return entry;
  }

  /**
   * Keeps a response of the dataset published at `publishedAt`. A newer dataset empties the cache;
   * a response of an older one (a request that began before the publish) is not kept.
   */
  add(scope: string, target: string, publishedAt: string, contentType: string, identity: Buffer, route: string, headers: Record<string, string> = {}): CachedResponse | undefined {
    if (publishedAt < this.publishedAt) return undefined;
    if (publishedAt > this.publishedAt) {
      this.scopes.clear();
      this.order.clear();
      this.bytes = 0;
      this.publishedAt = publishedAt;
    }
    const entry = new CachedResponse(scope, target, contentType, headers, identity, route);
    if (entry.bytes > this.maxBytes / MAX_ENTRY_SHARE) return undefined;
    let inScope = this.scopes.get(scope);
    if (inScope === undefined) {
      inScope = new Map();
      this.scopes.set(scope, inScope);
    }
    const replaced = inScope.get(target);
    if (replaced !== undefined) this.remove(replaced);
    inScope.set(target, entry);
    this.order.add(entry);
    entry.insertedAt = this.insertions++;
    this.grew(entry.bytes);
    return entry;
  }

  /** Accounts for bytes an entry grew by (a new coding), evicting the least recently used entries. */
  grew(bytes: number): void {
    this.bytes += bytes;
    for (const entry of this.order) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(entry);
    }
  }

  private remove(entry: CachedResponse): void {
    this.order.delete(entry);
    const inScope = this.scopes.get(entry.scope)!;
    inScope.delete(entry.target);
    if (inScope.size === 0) this.scopes.delete(entry.scope);
    this.bytes -= entry.bytes;
  }
}

/**
 * The request target as a cache key: the path without a trailing slash, and the query parameters
 * decoded, sorted and encoded again, so `?b=2&a=1`, `?a=1&b=2` and `?a=%31&b=2` share one entry.
 * The order of the parameters does not change a response (pages' links list them sorted too).
 */
export function normalisedTarget(url: string): string {
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const trailingSlash = path.length > 1 && path.endsWith('/');
  // Most targets are normal already (this API's own links are): found so without building anything.
  if (!trailingSlash && (mark === -1 || isNormalQuery(url.slice(mark + 1)))) return url;
  const trimmedPath = trailingSlash ? path.replace(/(.)\/+$/, '$1') : path;
  if (mark === -1 || mark === url.length - 1) return trimmedPath;
  const query = new URLSearchParams(url.slice(mark + 1));
  query.sort();
  return `${trimmedPath}?${query}`;
}

/** name=value pairs of characters URLSearchParams writes as they are (no escapes, no `+`). */
const PLAIN_QUERY = /^[\w*.-]+=[\w*.-]*(?:&[\w*.-]+=[\w*.-]*)*$/;

/** Whether URLSearchParams, sorting a query and writing it again, would give it back unchanged. */
function isNormalQuery(query: string): boolean {
  if (!PLAIN_QUERY.test(query)) return false;
  if (!query.includes('&')) return true;
  let previous = '';
  for (const pair of query.split('&')) {
    const name = pair.slice(0, pair.indexOf('='));
    if (name < previous) return false;
    previous = name;
  }
  return true;
}
