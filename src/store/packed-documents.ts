import { AlteredDocument } from './document-check.ts';

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

/** What the full form adds to the listed one: `detail` less `listed` (see above), the own id a reference. */
export function detailsOf(listed: string, detail: string, id: string): string {
  const cut = listed.lastIndexOf(LAST_KEY);
  const tail = listed.length - cut;
  if (cut < 0 || !detail.startsWith(listed.slice(0, cut)) || !detail.endsWith(listed.slice(cut))) {
    throw new Error(`the full document of organization ${id} does not extend its listed form`);
  }
  return detail.slice(cut, detail.length - tail).replaceAll(`"${id}"`, `"${OWN_ID_REFERENCE}"`);
}

/** Below this many occurrences in the sample, a token or run is not worth a fragment. */
const MIN_OCCURRENCES = 4;
/** A reference costs three bytes of UTF-8 at most (two below fragment 0x700); shorter text is kept as it is. */
const MIN_LENGTH = 4;

/**
 * Makes a snapshot's fragments from a sample of the documents it will pack (see above), then packs
 * documents with them.
 */
export class FragmentMaker {
  private readonly sample: string[] = [];
  private readonly seeds: readonly string[];
  private fragmentOf: Map<string, string> | undefined;
  private recurring: Set<string> | undefined;

  /**
   * `seeds`: the inner text of objects known to recur before any is seen (every term's object, in
   * each form an organization holds it), made fragments however seldom the sample holds them.
   */
  constructor(seeds: readonly string[] = []) {
    this.seeds = seeds;
  }

  /** Adds a document to the sample; none may be added once packing has begun. */
  observe(json: string): void {
    if (this.fragmentOf !== undefined) throw new Error('the fragments are made already');
    this.sample.push(json);
  }

  get sampled(): number {
    return this.sample.length;
  }

  /** The fragments, in the order of their numbers: made from the sample on the first call. */
  fragments(): string[] {
    if (this.fragmentOf === undefined) this.make();
    return [...this.fragmentOf!.keys()];
  }

  private make(): void {
    const minimum = Math.max(MIN_OCCURRENCES, Math.ceil(this.sample.length / 2500));
    const tokenCounts = new Map<string, number>();
    for (const json of this.sample) for (const token of json.match(TOKENS) ?? []) tokenCounts.set(token, (tokenCounts.get(token) ?? 0) + 1);
    this.recurring = new Set([...tokenCounts].filter(([, count]) => count >= minimum).map(([token]) => token));
    for (const seed of this.seeds) for (const token of seed.match(TOKENS) ?? []) this.recurring.add(token);
    const candidates = new Map<string, number>();
    const count = (text: string) => candidates.set(text, (candidates.get(text) ?? 0) + 1);
    for (const json of this.sample) {
      for (const run of this.runs(json)) {
        if (typeof run === 'string') continue;
        count(run.join(''));
        if (run.length === 1) continue;
        const pieces = piecesOf(run);
        if (pieces.length > 1) for (const piece of pieces) count(piece.join(''));
        run.forEach(count);
      }
    }
    this.sample.length = 0;
    const seeds = new Set(this.seeds);
    const kept = [...candidates, ...[...seeds].filter((seed) => !candidates.has(seed)).map((seed): [string, number] => [seed, 0])]
      .filter(([text, occurrences]) => (occurrences >= minimum || seeds.has(text)) && text.length >= MIN_LENGTH)
      // The most used first (they get the shortest references); ties by text, so that the same sample makes the same table.
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, MAX_FRAGMENTS);
    this.fragmentOf = new Map(kept.map(([text], index) => [text, REFERENCE + String.fromCharCode(FIRST_FRAGMENT + index)]));
  }

  /** The tokens of `json`, with consecutive recurring ones grouped (arrays), the others alone. */
  private *runs(json: string): Generator<string | string[]> {
    let run: string[] = [];
    for (const token of json.match(TOKENS) ?? []) {
      if (this.recurring!.has(token)) {
        run.push(token);
        continue;
      }
      if (run.length > 0) yield run;
      run = [];
      yield token;
    }
    if (run.length > 0) yield run;
  }

  /** `json` packed: each run of recurring tokens by its fragment, else each of its pieces by theirs, else token by token. */
  pack(json: string): string {
    if (this.fragmentOf === undefined) this.make();
    const fragmentOf = this.fragmentOf!;
    let packed = '';
    for (const run of this.runs(json)) {
      if (typeof run === 'string') {
        packed += UUID_TOKEN.test(run) ? packedUuid(run) : run;
        continue;
      }
      const reference = fragmentOf.get(run.join(''));
      if (reference !== undefined) {
        packed += reference;
        continue;
      }
      for (const piece of run.length === 1 ? [run] : piecesOf(run)) {
        const pieceReference = piece.length === 1 ? undefined : fragmentOf.get(piece.join(''));
        if (pieceReference !== undefined) packed += pieceReference;
        else for (const token of piece) packed += fragmentOf.get(token) ?? token;
      }
    }
    return packed;
  }
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
