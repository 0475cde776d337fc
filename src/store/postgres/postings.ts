import type { DatabaseSync } from 'node:sqlite';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { StoreUnavailable } from '../store.ts';
import { isUnavailable } from './connection.ts';

/**
 * The organizations' text index as posting lists: per token, the search ranks of the organizations
 * holding it, ascending, each written as its distance from the one before in 7-bit groups (a varint),
 * so most take one byte. They are the doclists of the SQLite snapshot's FTS5 index, which the
 * embedded store searches; PostgreSQL keeps them in `organization_postings` to count a search's
 * matches without its heap.
 *
 * Why: a GIN index finds the rows holding every word, but PostgreSQL then visits each matching row's
 * heap page (for the count, and again for the first matches). At 2,000,000 organizations `community
 * foundation` matched 17,875 rows on 13,612 pages: 35 to 180 ms. Its posting lists are about
 * 390 KB, read and intersected here in 5 to 11 ms.
 */

/** Appends `gap` (≥ 1) as a varint. */
function writeGap(bytes: number[], gap: number): void {
  while (gap >= 0x80) {
    bytes.push((gap & 0x7f) | 0x80);
    gap >>>= 7;
  }
  bytes.push(gap);
}

/** Ranks (ascending, from 1) as posting bytes. */
export function encodePostings(ranks: Iterable<number>): Uint8Array {
  const bytes: number[] = [];
  let last = 0;
  for (const rank of ranks) {
    writeGap(bytes, rank - last);
    last = rank;
  }
  return Uint8Array.from(bytes);
}

/** Writes `count` ranks, read from their varint distances, into `target` from `at`. */
function decodeInto(bytes: Uint8Array, count: number, target: Int32Array, at: number): void {
  let rank = 0;
  let read = 0;
  for (let index = 0; index < count; index++) {
    let gap = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[read++]!;
      gap |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    rank += gap;
    target[at + index] = rank;
  }
}

/** `count` ranks from their varint distances. */
export function decodePostings(bytes: Uint8Array, count: number): Int32Array {
  const ranks = new Int32Array(count);
  decodeInto(bytes, count, ranks, 0);
  return ranks;
}

export type PostingRow = {
  token: string;
  organizations: number;
  /** For COPY's text format: `\x` and the bytes in hex. */
  postings: string;
};

/**
 * Every token of a snapshot's organizations' text index with its posting list, in token order.
 * fts5vocab's `instance` table gives each occurrence (token, rowid, column, offset) in that order;
 * the rowid is the search rank.
 */
export function* postingRows(snapshot: DatabaseSync): Generator<PostingRow> {
  snapshot.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.organizations_instances USING fts5vocab(main, organizations_text, instance)');
  const statement = snapshot.prepare('SELECT term, doc FROM temp.organizations_instances');
  statement.setReturnArrays(true);
  let token: string | undefined;
  let ranks: number[] = [];
  const row = (): PostingRow => ({ token: token!, organizations: ranks.length, postings: `\\x${Buffer.from(encodePostings(ranks)).toString('hex')}` });
  for (const [term, rank] of statement.iterate() as Iterable<[string, number]>) {
    if (term !== token) {
      if (token !== undefined) yield row();
      token = term;
      ranks = [];
    }
    // One row per occurrence: a token twice in one organization's text gives its rank twice.
    if (ranks.at(-1) !== rank) ranks.push(rank);
  }
  if (token !== undefined) yield row();
}

/** A token's posting list as PostgreSQL returns it. */
export interface PostingList {
  token: string;
  organizations: number;
  postings: Uint8Array;
}

/** A text value as an SQL literal. */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * The posting lists of these tokens (those that have one) from `table`. Read with a binary COPY,
 * not a query: node-postgres turns every value it reads into a string, so a bytea came as hex text
 * decoded twice over. For `community foundation` at 2,000,000 organizations (390 KB of postings)
 * a query took 9 to 15 ms, the COPY 2 to 7. COPY takes no parameters, hence the literals.
 */
export async function readPostingLists(pool: pg.Pool, table: string, tokens: readonly string[]): Promise<PostingList[]> {
  if (tokens.length === 0) return [];
  let client: pg.PoolClient | undefined;
  let failure: Error | undefined;
  try {
    client = await pool.connect();
    const chunks: Buffer[] = [];
    // The pool's query_timeout applies to a COPY too: a server that stops answering is given up on.
    const copy = client.query(copyTo(`COPY (SELECT token, organizations, postings FROM ${table} WHERE token IN (${tokens.map(literal).join(', ')})) TO STDOUT (FORMAT binary)`));
    for await (const chunk of copy) chunks.push(chunk as Buffer);
    return binaryCopyRows(Buffer.concat(chunks));
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    if (isUnavailable(error)) throw new StoreUnavailable('the database is not reachable', { cause: error });
    throw error;
  } finally {
    // A connection whose COPY failed is closed rather than given back to the pool.
    client?.release(failure);
  }
}

/**
 * Posting lists read before, by token, up to `budget` bytes, the least recently used dropped first:
 * a generation's lists never change, and one search asks for the same tokens more than once (its
 * full and its partial matches), as the next searches often do (common words).
 */
export class PostingListCache {
  private readonly lists = new Map<string, PostingList | null>();
  private readonly reading = new Map<string, Promise<unknown>>();
  private bytes = 0;
  private readonly budget: number;
  private readonly read: (tokens: readonly string[]) => Promise<PostingList[]>;

  constructor(budget: number, read: (tokens: readonly string[]) => Promise<PostingList[]>) {
    this.budget = budget;
    this.read = read;
  }

  /** The lists of these tokens (a token no organization holds has none), reading those not kept in one go. */
  async get(tokens: readonly string[]): Promise<PostingList[]> {
    const found = new Map<string, PostingList | null>();
    const missing = tokens.filter((token) => !this.lists.has(token) && !this.reading.has(token));
    if (missing.length > 0) {
      const read = this.read(missing).then((lists) => {
        const byToken = new Map(lists.map((list) => [list.token, list]));
        for (const token of missing) {
          const list = byToken.get(token) ?? null;
          found.set(token, list);
          this.keep(token, list);
        }
      });
      for (const token of missing) this.reading.set(token, read);
      void read.catch(() => {}).finally(() => missing.forEach((token) => this.reading.get(token) === read && this.reading.delete(token)));
    }
    await Promise.all([...new Set(tokens.map((token) => this.reading.get(token)).filter((read) => read !== undefined))]);
    const again: string[] = [];
    for (const token of tokens) {
      if (found.has(token)) continue;
      const list = this.lists.get(token);
      if (list === undefined) again.push(token);
      else {
        // Used again: it becomes the most recently used.
        this.lists.delete(token);
        this.lists.set(token, list);
        found.set(token, list);
      }
    }
    // Dropped while another search was reading it: read for this search alone.
    if (again.length > 0) for (const list of await this.read(again)) found.set(list.token, list);
    return [...found.values()].filter((list) => list !== null);
  }

  private keep(token: string, list: PostingList | null): void {
    const size = listBytes(token, list);
    if (size > this.budget) return;
    // Its own copy: the list is a slice of the whole COPY's buffer, which it would otherwise keep alive.
    this.lists.set(token, list === null ? null : { ...list, postings: Buffer.from(list.postings) });
    this.bytes += size;
    for (const [oldest, dropped] of this.lists) {
      if (this.bytes <= this.budget) break;
      this.lists.delete(oldest);
      this.bytes -= listBytes(oldest, dropped);
    }
  }
}

const listBytes = (token: string, list: PostingList | null): number => token.length + (list?.postings.length ?? 0) + 64;

/** The rows of a binary COPY of (text, integer, bytea): a signature, flags and an extension, then per row its field count and each field's length and bytes. */
function binaryCopyRows(data: Buffer): PostingList[] {
  let at = 11 + 4;
  at += 4 + data.readInt32BE(at);
  const rows: PostingList[] = [];
  const field = (): Buffer => {
    const length = data.readInt32BE(at);
    const value = data.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    return value;
  };
  while (data.readInt16BE(at) !== -1) {
    at += 2;
    const token = field().toString('utf8');
    const organizations = field().readInt32BE(0);
    rows.push({ token, organizations, postings: field() });
  }
  return rows;
}

/** How many organizations a search matches, and the search ranks of the first of them. */
export interface Matches {
  count: number;
  /** Ascending; as many as were asked for, or all when fewer match. */
  first: Int32Array;
}

/**
 * Matches searches against posting lists in memory it keeps between searches: with a new typed
 * array per list and per merge (a quarter of a megabyte for a common word at 2,000,000
 * organizations), V8's collections cost more than the merging itself (`youth development` at 2M:
 * 10.5 ms to match that way, 1.6 ms this way).
 */
export class PostingsMatcher {
  private space = new Int32Array(1 << 16);
  /** Space larger than this (16 MB: a search over many common words) is not kept after the search that needed it. */
  private static readonly KEPT = 1 << 22;

  /**
   * The organizations meeting any of these clauses, which no organization meets two of (see
   * matchClauses): their count and the first `keep`.
   */
  matchAny(clauses: readonly { words: readonly (readonly string[])[]; excluded: readonly (readonly string[])[] }[], lists: readonly PostingList[], keep: number): Matches {
    if (clauses.length === 1) return this.match(clauses[0]!.words, lists, keep, clauses[0]!.excluded);
    const each = clauses.map(({ words, excluded }) => this.match(words, lists, keep, excluded));
    const first = new Int32Array(each.reduce((sum, matches) => sum + matches.first.length, 0));
    let at = 0;
    for (const matches of each) {
      first.set(matches.first, at);
      at += matches.first.length;
    }
    first.sort();
    return { count: each.reduce((sum, matches) => sum + matches.count, 0), first: first.slice(0, keep) };
  }

  /**
   * The organizations holding, for every word, one of its tokens (`words`), and no token of an
   * `excluded` word; `lists` gives the tokens' posting lists, a token without one is held by nobody.
   * Returns their count and the first `keep`.
   */
  match(words: readonly (readonly string[])[], lists: readonly PostingList[], keep: number, excluded: readonly (readonly string[])[] = []): Matches {
    if (words.length === 0) return { count: 0, first: new Int32Array(0) };
    const byToken = new Map(lists.map((list) => [list.token, list]));
    const listsOf = (tokens: readonly string[]) => [...new Set(tokens)].flatMap((token) => byToken.get(token) ?? []).sort((a, b) => a.organizations - b.organizations);
    const wordLists = words.map(listsOf);
    if (wordLists.some((found) => found.length === 0)) return { count: 0, first: new Int32Array(0) };
    const excludedLists = listsOf(excluded.flat());
    const total = (found: readonly PostingList[]) => found.reduce((sum, list) => sum + list.organizations, 0);
    const sizes = [...wordLists.map(total), total(excludedLists)];
    // Decoded lists, then for each word of several tokens (and the excluded words) their union, then one scratch union.
    const needed = sizes.reduce((sum, size) => sum + size, 0) * 2 + Math.max(...sizes);
    const space = needed <= this.space.length ? this.space : new Int32Array(needed);
    if (space.length > this.space.length && space.length < PostingsMatcher.KEPT) this.space = space;
    let free = 0;
    const take = (length: number): number => {
      const at = free;
      free += length;
      return at;
    };
    const scratch = take(Math.max(...sizes));
    const unionOf = (found: readonly PostingList[]): Int32Array => {
      const decoded = found.map((list) => {
        const at = take(list.organizations);
        decodeInto(list.postings, list.organizations, space, at);
        return space.subarray(at, at + list.organizations);
      });
      if (decoded.length === 1) return decoded[0]!;
      const at = take(total(found));
      // Smallest first, so that the largest list is copied once; the union ends in `at`.
      let merged: Int32Array = decoded[0]!;
      for (let next = 1; next < decoded.length; next++) {
        const into = (decoded.length - next) % 2 === 1 ? at : scratch;
        merged = union(merged, decoded[next]!, space, into);
      }
      return merged;
    };
    const perWord = wordLists.map(unionOf).sort((a, b) => a.length - b.length);
    let matches: Int32Array = perWord[0]!;
    for (let next = 1; next < perWord.length && matches.length > 0; next++) matches = filterInPlace(matches, perWord[next]!, true);
    if (excludedLists.length > 0 && matches.length > 0) matches = filterInPlace(matches, unionOf(excludedLists), false);
    return { count: matches.length, first: matches.slice(0, keep) };
  }
}

/** The ranks in either list, ascending, written into `space` from `at` (which neither list may overlap). */
function union(a: Int32Array, b: Int32Array, space: Int32Array, at: number): Int32Array {
  const aLength = a.length;
  const bLength = b.length;
  let i = 0;
  let j = 0;
  let k = at;
  while (i < aLength && j < bLength) {
    const x = a[i]! | 0;
    const y = b[j]! | 0;
    if (x < y) {
      space[k++] = x;
      i++;
    } else if (y < x) {
      space[k++] = y;
      j++;
    } else {
      space[k++] = x;
      i++;
      j++;
    }
  }
  while (i < aLength) space[k++] = a[i++]! | 0;
  while (j < bLength) space[k++] = b[j++]! | 0;
  return space.subarray(at, k);
}

/**
 * The ranks of `small` that `large` holds (`held`) or does not hold (not `held`), ascending, written
 * over `small`'s own first places.
 */
function filterInPlace(small: Int32Array, large: Int32Array, held: boolean): Int32Array {
  const smallLength = small.length;
  const largeLength = large.length;
  // Walking both suits lists of like size; galloping through `large` suits a much smaller `small`.
  const gallop = largeLength > smallLength * 16;
  let k = 0;
  let from = 0;
  for (let i = 0; i < smallLength; i++) {
    const rank = small[i]! | 0;
    if (from >= largeLength) {
      if (held) break;
      small[k++] = rank;
      continue;
    }
    if (gallop) {
      let step = 1;
      let to = from;
      while (to < largeLength && (large[to]! | 0) < rank) {
        from = to + 1;
        to += step;
        step *= 2;
      }
      let high = to < largeLength ? to : largeLength - 1;
      while (from < high) {
        const middle = (from + high) >>> 1;
        if ((large[middle]! | 0) < rank) from = middle + 1;
        else high = middle;
      }
    } else {
      while (from < largeLength && (large[from]! | 0) < rank) from++;
    }
    if ((from < largeLength && (large[from]! | 0) === rank) === held) small[k++] = rank;
  }
  return small.subarray(0, k);
}
