import { AlteredDocument } from './document-check.ts';
import { lastModifiedSuffix, readAtSuffix } from '../hsds/render.ts';

/**
 * How a snapshot keeps its organizations' JSON in a third of the bytes, and gives back the very bytes
 * rendered at publish (issue 40). Three things repeat from one organization to the next: the keys and
 * the punctuation between them, values many organizations share (a tax status, a term's whole object,
 * a source's name, a publish time), and in the full form the organization's own id (each attribute
 * and identifier links to it) and everything the list form already holds.
 *
 * - **Fragments.** At publish, the JSON of a sample of organizations is cut into tokens (each string
 *   literal, and the text between two of them), and what recurs in it — a run of consecutive tokens
 *   each found in at least one in a thousand documents, or one such token — becomes a fragment of the
 *   snapshot (`document_fragments`, see tables.ts). A packed document is its JSON with each fragment it
 *   holds written as a reference: U+0001 then one character, code 0x100 + the fragment's number.
 *   U+0001 never occurs in JSON text (JSON.stringify writes control characters escaped), so a
 *   reference cannot be mistaken for text. Unpacking joins the text and the fragments back.
 * - **Ids.** A string that is a lowercase UUID (36 characters) is kept as its 16 bytes in base64url:
 *   U+0001 U+0002 then 22 characters.
 * - **The full form is the listed one plus details.** `organization_items` keeps the listed form;
 *   `organization_documents` only what the full form adds (the details), before the listed form's last
 *   key (`last_modified`): the full document is the one spliced into the other. In the details the
 *   organization's id is a reference too (U+0001 U+0001), which a fragment of details may hold.
 *
 * A fragment table is made from a sample, so any input works: a dataset with nothing in common
 * between its organizations packs to its plain JSON. Each stored text keeps its check (see
 * document-check.ts), which is of the packed text: what the disk holds.
 */

const REFERENCE = '\u0001';
/** The code of the character after U+0001 that stands for the organization's own id (in details). */
const OWN_ID = 1;
/** The code of the character after U+0001 that begins a UUID as base64url (22 characters). */
const UUID = 2;
const UUID_BASE64_LENGTH = 22;
const OWN_ID_REFERENCE = REFERENCE + String.fromCharCode(OWN_ID);
/** A UUID's token where `lastIndex` says (sticky: it reads nothing before). */
const UUID_AT = /"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/y;
const UUID_TOKEN_LENGTH = 38;
const FIRST_FRAGMENT = 0x100;
/** Fragment characters stay below the surrogates, so that every one is a character of its own. */
const MAX_FRAGMENTS = 0xd800 - FIRST_FRAGMENT;

/** The key that is last in both forms of an organization (see render.ts withLastModified). */
const LAST_KEY = ',"last_modified":';
const ID_PREFIX = '{"id":"';
const ID_LENGTH = 36;

/** Tokens of JSON text: each string literal whole, and each run of other characters. */
const TOKENS = /"(?:[^"\\]|\\.)*"|[^"]+/g;

/** The fragments of one snapshot, as it unpacks its documents. */
export class Fragments {
  /** Each fragment's text, or where it holds the own id (a fragment of details), its parts around it. */
  private readonly texts: readonly (string | string[])[];

  constructor(texts: readonly string[]) {
    this.texts = texts.map((text) => (text.includes(OWN_ID_REFERENCE) ? text.split(OWN_ID_REFERENCE) : text));
  }

  /** `packed` with every reference replaced by its text (`ownId` for the organization's own id). */
  unpack(packed: string, where: string, ownId?: string): string {
    let at = packed.indexOf(REFERENCE);
    if (at < 0) return packed;
    let text = '';
    let from = 0;
    while (at >= 0) {
      const code = packed.charCodeAt(at + 1);
      text += packed.slice(from, at);
      from = at + 2;
      if (code === UUID) {
        text += uuidOf(packed.slice(from, (from += UUID_BASE64_LENGTH)));
      } else {
        const fragment = code === OWN_ID ? ownId : this.texts[code - FIRST_FRAGMENT];
        if (fragment === undefined || (typeof fragment !== 'string' && ownId === undefined)) {
          throw new AlteredDocument(`a document read from ${where} refers to fragment ${code - FIRST_FRAGMENT}, which this snapshot lacks`);
        }
        text += typeof fragment === 'string' ? fragment : fragment.join(ownId);
      }
      at = packed.indexOf(REFERENCE, from);
    }
    return text + packed.slice(from);
  }

  /** An organization's full document, from its listed form and its details, each as stored. */
  organization(item: string, details: string, where: string): string {
    const listed = this.unpack(item, where);
    const cut = listed.lastIndexOf(LAST_KEY);
    if (!listed.startsWith(ID_PREFIX) || cut < 0) throw new AlteredDocument(`an organization read from ${where} is not as published`);
    return listed.slice(0, cut) + this.unpack(details, where, listed.slice(ID_PREFIX.length, ID_PREFIX.length + ID_LENGTH)) + listed.slice(cut);
  }
}

/** A UUID as packed: its 16 bytes in base64url. */
const packedUuid = (token: string): string =>
  `"${REFERENCE}${String.fromCharCode(UUID)}${Buffer.from(token.slice(1, -1).replaceAll('-', ''), 'hex').toString('base64url')}"`;

function uuidOf(base64: string): string {
  const hex = Buffer.from(base64, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The texts an organization's packed forms are made of, as rendered: the `heads` do not depend on the
 * publish (they are made, and packed, beside the rendering), the `tails` do (`last_modified`, and a
 * `read_at` the publish adds). The listed form is `item + itemTail`; the details (what the full form
 * adds, see above) `details + detailsTail`, the organization's own id in them a reference.
 */
export interface OrganizationTexts {
  item: string;
  details: string;
}

/**
 * The heads of an organization rendered as `listJson` and `detailJson` (without `last_modified`, and
 * without the `read_at` that `addsReadAt` says the publish adds: see render.ts).
 */
export function organizationHeads(listJson: string, detailJson: string, id: string, addsReadAt: boolean): OrganizationTexts {
  const cut = listJson.length - 1;
  if (!listJson.startsWith(ID_PREFIX) || !detailJson.startsWith(listJson.slice(0, cut))) throw new Error(`the full document of organization ${id} does not extend its listed form`);
  return { item: listJson.slice(0, cut), details: detailJson.slice(cut, addsReadAt ? -2 : -1).replaceAll(`"${id}"`, `"${OWN_ID_REFERENCE}"`) };
}

/** The tails of an organization (see OrganizationTexts), as render.ts adds them. */
export const organizationTails = (lastModified: string, readAt: string | undefined): OrganizationTexts => ({
  item: lastModifiedSuffix(lastModified),
  details: readAt === undefined ? '' : readAtSuffix(readAt),
});

/** Below this many occurrences in the sample, a token or run is not worth a fragment. */
const MIN_OCCURRENCES = 4;
/** A reference costs three bytes of UTF-8 at most (two below fragment 0x700); shorter text is kept as it is. */
const MIN_LENGTH = 4;

/** Makes a snapshot's fragments from a sample of the texts it will pack (see above). */
export class FragmentMaker {
  private readonly sample: string[] = [];
  private readonly seeds: readonly string[];

  /**
   * `seeds`: the inner text of objects known to recur before any is seen (every term's object, in
   * each form an organization holds it), made fragments however seldom the sample holds them.
   */
  constructor(seeds: readonly string[] = []) {
    this.seeds = seeds;
  }

  /** Adds a text to the sample. */
  observe(json: string): void {
    this.sample.push(json);
  }

  get sampled(): number {
    return this.sample.length;
  }

  /** The fragments, in the order of their numbers, made from the sample so far. */
  fragments(): string[] {
    const minimum = Math.max(MIN_OCCURRENCES, Math.ceil(this.sample.length / 2500));
    const tokenCounts = new Map<string, number>();
    for (const json of this.sample) for (const token of json.match(TOKENS) ?? []) tokenCounts.set(token, (tokenCounts.get(token) ?? 0) + 1);
    const recurring = new Set([...tokenCounts].filter(([, count]) => count >= minimum).map(([token]) => token));
    for (const seed of this.seeds) for (const token of seed.match(TOKENS) ?? []) recurring.add(token);
    const candidates = new Map<string, number>();
    const count = (text: string) => candidates.set(text, (candidates.get(text) ?? 0) + 1);
    for (const json of this.sample) {
      for (const run of runsOf(json, recurring)) {
        count(run.join(''));
        if (run.length === 1) continue;
        const pieces = piecesOf(run);
        if (pieces.length > 1) for (const piece of pieces) count(piece.join(''));
        run.forEach(count);
      }
    }
    const seeds = new Set(this.seeds);
    return [...candidates, ...[...seeds].filter((seed) => !candidates.has(seed)).map((seed): [string, number] => [seed, 0])]
      .filter(([text, occurrences]) => (occurrences >= minimum || seeds.has(text)) && text.length >= MIN_LENGTH)
      // The most used first (they get the shortest references); ties by text, so that the same sample makes the same table.
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, MAX_FRAGMENTS)
      .map(([text]) => text);
  }
}

/** The runs of consecutive recurring tokens of `json`. */
function* runsOf(json: string, recurring: ReadonlySet<string>): Generator<string[]> {
  let run: string[] = [];
  for (const token of json.match(TOKENS) ?? []) {
    if (recurring.has(token)) {
      run.push(token);
    } else if (run.length > 0) {
      yield run;
      run = [];
    }
  }
  if (run.length > 0) yield run;
}

/** Packs texts with a snapshot's fragments (see above). */
export class Packer {
  /**
   * The tree of the fragments' tokens, flat: node 0 is the root; each other node has its parent, the
   * hash of its token (tokenHash) and, where a fragment ends there, its reference and its text. Edges
   * are found in one map by parent and hash (a map per node took 18 MB at 3,000 fragments, which a
   * rendering worker's heap could not spare). A hash that misleads is caught where the fragment found
   * is checked against its text before it is used.
   */
  private readonly parents: number[] = [-1];
  private readonly hashes: number[] = [0];
  private readonly references: (string | undefined)[] = [undefined];
  private readonly texts: string[] = [''];
  private readonly edges = new Map<number, number | number[]>();

  /** Per node, the one fragment ending below it (or at it), where only one does; else -1. */
  private readonly onlyFragment: number[];

  constructor(fragments: readonly string[]) {
    fragments.forEach((text, index) => {
      let node = 0;
      for (const token of text.match(TOKENS)!) node = this.childFor(node, tokenHash(token, 0, token.length));
      this.references[node] = REFERENCE + String.fromCharCode(FIRST_FRAGMENT + index);
      this.texts[node] = text;
    });
    // A child is made after its parent: counted from the last node back, each subtree is done before its parent.
    const ends = this.parents.map((_, node) => (this.references[node] === undefined ? 0 : 1));
    this.onlyFragment = this.parents.map((_, node) => (this.references[node] === undefined ? -1 : node));
    for (let node = this.parents.length - 1; node > 0; node--) {
      const parent = this.parents[node]!;
      ends[parent]! += ends[node]!;
      if (this.onlyFragment[node]! >= 0) this.onlyFragment[parent] = this.onlyFragment[node]!;
    }
    for (let node = 0; node < this.parents.length; node++) if (ends[node] !== 1) this.onlyFragment[node] = -1;
  }

  private child(parent: number, hash: number): number {
    const found = this.edges.get(edgeKey(parent, hash));
    if (found === undefined) return -1;
    if (typeof found === 'number') return this.parents[found] === parent && this.hashes[found] === hash ? found : -1;
    return found.find((node) => this.parents[node] === parent && this.hashes[node] === hash) ?? -1;
  }

  private childFor(parent: number, hash: number): number {
    const found = this.child(parent, hash);
    if (found >= 0) return found;
    const node = this.parents.length;
    this.parents.push(parent);
    this.hashes.push(hash);
    this.references.push(undefined);
    this.texts.push('');
    const key = edgeKey(parent, hash);
    const alike = this.edges.get(key);
    this.edges.set(key, alike === undefined ? node : [...(typeof alike === 'number' ? [alike] : alike), node]);
    return node;
  }

  /**
   * `json` packed: from each token on, the longest fragment that starts there (found in the tree of
   * the fragments' tokens, by hash, then checked against its text), else the token as it is (a UUID
   * as its bytes). Tokens are read as positions in `json`, never cut out: on every organization of
   * every publish, allocation is what costs.
   */
  pack(json: string): string {
    let packed = '';
    let literalFrom = 0;
    for (let at = 0; at < json.length; ) {
      let node = 0;
      let found = -1;
      let foundEnd = at;
      let shorter: number[] | undefined;
      const firstEnd = tokenEnd(json, at);
      for (let from = at; from < json.length; ) {
        const end = from === at ? firstEnd : tokenEnd(json, from);
        node = this.child(node, tokenHash(json, from, end));
        if (node < 0) break;
        from = end;
        // Below here only one fragment ends (a term's object, say): its text is checked at once, not token by token.
        const only = this.onlyFragment[node]!;
        if (only >= 0 && only !== node) {
          if (json.startsWith(this.texts[only]!, at)) {
            if (found >= 0) (shorter ??= []).push(found, foundEnd);
            found = only;
            foundEnd = at + this.texts[only]!.length;
          }
          break;
        }
        if (this.references[node] === undefined) continue;
        if (found >= 0) (shorter ??= []).push(found, foundEnd);
        found = node;
        foundEnd = end;
      }
      while (found >= 0 && !json.startsWith(this.texts[found]!, at)) {
        foundEnd = shorter?.pop() ?? at;
        found = shorter?.pop() ?? -1;
      }
      if (found >= 0) {
        packed += json.slice(literalFrom, at) + this.references[found];
        at = literalFrom = foundEnd;
        continue;
      }
      const end = firstEnd;
      UUID_AT.lastIndex = at;
      if (end - at === UUID_TOKEN_LENGTH && UUID_AT.test(json)) {
        packed += json.slice(literalFrom, at) + packedUuid(json.slice(at, end));
        literalFrom = end;
      }
      at = end;
    }
    return packed + json.slice(literalFrom);
  }

  heads(heads: OrganizationTexts): OrganizationTexts {
    return { item: this.pack(heads.item), details: this.pack(heads.details) };
  }

  /** An organization's texts as stored: its heads packed (here, or already), then its tails. */
  organization(heads: OrganizationTexts, packedHeads: OrganizationTexts | undefined, tails: OrganizationTexts): OrganizationTexts {
    const packed = packedHeads ?? this.heads(heads);
    return { item: packed.item + this.pack(tails.item), details: packed.details + this.pack(tails.details) };
  }
}

/** Where the token of JSON text `json` that starts at `from` ends: as TOKENS reads it. */
function tokenEnd(json: string, from: number): number {
  if (json.charCodeAt(from) !== 0x22) {
    const quote = json.indexOf('"', from);
    return quote < 0 ? json.length : quote;
  }
  for (let after = from + 1; ; ) {
    const quote = json.indexOf('"', after);
    if (quote < 0) return json.length;
    let backslashes = 0;
    while (json.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    after = quote + 1;
  }
}

/**
 * FNV-1a of a token's length and of its first 12 and last 4 characters (the whole of a shorter one):
 * the tree's edges are found by it (see Packer). Long tokens are mostly names and ids, which no
 * fragment holds; hashing them whole took a third of the packing.
 */
function tokenHash(text: string, from: number, end: number): number {
  let hash = Math.imul(0x811c9dc5 ^ (end - from), 0x01000193);
  const head = Math.min(end, from + 12);
  for (let at = from; at < head; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
  for (let at = Math.max(head, end - 4); at < end; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
  return hash;
}

/**
 * The key of the edge from `parent` by a token of this hash: 30 bits, so that V8 keeps it as a small
 * integer (a larger one is a heap number, allocated for every lookup).
 */
const edgeKey = (parent: number, hash: number): number => (Math.imul(parent + 1, 0x9e3779b1) ^ hash) & 0x3fffffff;

/**
 * A run of recurring tokens cut around each token where an object opens or closes (one that is no
 * string and holds `{` or `}`), so that a run whose whole recurs too seldom (three terms of an
 * organization together) still packs by what does: the inside of each object (a term's).
 */
function piecesOf(run: readonly string[]): string[][] {
  const pieces: string[][] = [];
  let piece: string[] = [];
  for (const token of run) {
    if (token.charCodeAt(0) !== 0x22 && (token.includes('{') || token.includes('}'))) {
      if (piece.length > 0) pieces.push(piece);
      pieces.push([token]);
      piece = [];
    } else {
      piece.push(token);
    }
  }
  if (piece.length > 0) pieces.push(piece);
  return pieces;
}
