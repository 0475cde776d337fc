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
const UUID_TOKEN = /^"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"$/;
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
  private readonly tree = new FragmentTree();

  constructor(fragments: readonly string[]) {
    fragments.forEach((text, index) => {
      let node = this.tree;
      for (const token of text.match(TOKENS)!) {
        node.children ??= new Map();
        let child = node.children.get(token);
        if (child === undefined) node.children.set(token, (child = new FragmentTree()));
        node = child;
      }
      node.reference = REFERENCE + String.fromCharCode(FIRST_FRAGMENT + index);
    });
  }

  /**
   * `json` packed: from each token on, the longest fragment that starts there (found in a tree of the
   * fragments' tokens), else the token as it is (a UUID as its bytes).
   */
  pack(json: string): string {
    const tokens = json.match(TOKENS) ?? [];
    let packed = '';
    for (let at = 0; at < tokens.length; ) {
      let node = this.tree;
      let reference: string | undefined;
      let end = at;
      for (let next = at; next < tokens.length; ) {
        const child = node.children?.get(tokens[next]!);
        if (child === undefined) break;
        node = child;
        next++;
        if (node.reference !== undefined) {
          reference = node.reference;
          end = next;
        }
      }
      if (reference !== undefined) {
        packed += reference;
        at = end;
      } else {
        const token = tokens[at++]!;
        packed += UUID_TOKEN.test(token) ? packedUuid(token) : token;
      }
    }
    return packed;
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

/** A tree of the fragments' tokens: the reference of the fragment that ends at a node, if one does. */
class FragmentTree {
  reference: string | undefined = undefined;
  children: Map<string, FragmentTree> | undefined = undefined;
}

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
