import type { DatabaseSync } from 'node:sqlite';

/**
 * The organizations' text index as posting lists: per token, the search ranks of the organizations
 * holding it, ascending, each written as its distance from the one before in 7-bit groups (a varint),
 * so most take one byte. They are the doclists of the SQLite snapshot's FTS5 index, which the
 * embedded store searches; PostgreSQL keeps them in `organization_postings` to count a search's
 * matches without its heap.
 *
 * Why: a GIN index finds the rows holding every word, but PostgreSQL then visits each matching row's
 * heap page (for the count, and again for the first matches). At 2,000,000 organizations `community
 * foundation` matched 17,875 rows on 13,612 pages: 49 to 183 ms. Its two posting lists are about
 * 330 KB, read and intersected here in a few milliseconds.
 */

/** Appends `gap` (≥ 1) as a varint. */
function writeGap(bytes: number[], gap: number): void {
  while (gap >= 0x80) {
    bytes.push((gap & 0x7f) | 0x80);
    gap >>>= 7;
  }
  bytes.push(gap);
}

/** `count` ranks from their varint distances. */
export function decodePostings(bytes: Uint8Array, count: number): Int32Array {
  const ranks = new Int32Array(count);
  let rank = 0;
  let at = 0;
  for (let index = 0; index < count; index++) {
    let gap = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++]!;
      gap |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    rank += gap;
    ranks[index] = rank;
  }
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
  let bytes: number[] = [];
  let organizations = 0;
  let last = 0;
  const row = (): PostingRow => ({ token: token!, organizations, postings: `\\x${Buffer.from(bytes).toString('hex')}` });
  for (const [term, rank] of statement.iterate() as Iterable<[string, number]>) {
    if (term !== token) {
      if (token !== undefined) yield row();
      token = term;
      bytes = [];
      organizations = 0;
      last = 0;
    }
    if (rank === last) continue;
    writeGap(bytes, rank - last);
    last = rank;
    organizations++;
  }
  if (token !== undefined) yield row();
}

/** The ranks in either list, ascending. */
function union(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    out[k++] = x <= y ? x : y;
    if (x <= y) i++;
    if (y <= x) j++;
  }
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out.subarray(0, k);
}

/** The ranks in both lists, ascending; `small` is walked, `large` searched by galloping from where the last match left off. */
function intersection(small: Int32Array, large: Int32Array): Int32Array {
  const out = new Int32Array(small.length);
  let k = 0;
  let from = 0;
  for (let i = 0; i < small.length && from < large.length; i++) {
    const rank = small[i]!;
    let step = 1;
    let to = from;
    while (to < large.length && large[to]! < rank) {
      from = to + 1;
      to += step;
      step *= 2;
    }
    let high = Math.min(to, large.length - 1);
    while (from < high) {
      const middle = (from + high) >>> 1;
      if (large[middle]! < rank) from = middle + 1;
      else high = middle;
    }
    if (large[from] === rank) out[k++] = rank;
  }
  return out.subarray(0, k);
}

/**
 * The ranks of the organizations holding, for every word, one of its tokens (`lists` gives each
 * token's posting list; a token without one is held by nobody), ascending.
 */
export function matchingRanks(words: readonly (readonly string[])[], lists: ReadonlyMap<string, Int32Array>): Int32Array {
  const empty = new Int32Array(0);
  const perWord = words.map((tokens) => tokens.map((token) => lists.get(token) ?? empty).reduce(union, empty));
  perWord.sort((a, b) => a.length - b.length);
  return perWord.reduce((matches, list) => intersection(matches, list));
}
