import { AlteredDocument } from './document-check.ts';

/**
 * How a snapshot keeps its organizations' JSON in a third of the bytes, and gives back the very bytes
 * rendered at publish (issue 40). Three things repeat from one organization to the next: the keys and
 * the punctuation between them, values many organizations share (a tax status, a term's whole object,
 * a source's name, a publish time), and in the full form the organization's own id (each attribute
 * and identifier links to it) and everything the list form already holds.
 *
 * - **Fragments.** Each organization is written packed as it is rendered (PackingWriter: the JSON
 *   that JSON.stringify gives, value by value), with a reference in place of each piece that recurs:
 *   a key with the punctuation before it (`,"name":`), a term's whole object (as a classification, and
 *   as an attribute's term), and a member of a key whose values are few (CATEGORICAL: a tax status,
 *   a source, a publish time). A piece becomes a fragment of the snapshot (`document_fragments`, see
 *   tables.ts) the first time it is met, and the reference is U+0001 then two characters, the
 *   fragment's number (see REFERENCE). U+0001 never occurs in JSON text (JSON.stringify writes
 *   control characters escaped), so a reference cannot be mistaken for text. Unpacking joins the
 *   text and the fragments.
 * - **Ids.** In details, a string that is a lowercase UUID (36 characters) is kept as its 16 bytes in
 *   base64url: U+0001 `~` then 22 characters.
 * - **The full form is the listed one plus details.** `organization_items` keeps the listed form;
 *   `organization_documents` only what the full form adds (the details), before the listed form's last
 *   key (`last_modified`): the full document is the one spliced into the other. In the details the
 *   organization's id is a reference too (U+0001 `!`).
 *
 * Packing costs a walk of what is rendered, never a reading of its text: a tokenizing packer that
 * found fragments in a sample took 25 µs an organization, which tripled the import's writing. Each
 * stored text keeps its check (see document-check.ts), which is of the packed text: what the disk holds.
 */

const REFERENCE = '\u0001';
/**
 * After U+0001: `!` for the organization's own id, `~` then 22 characters for a UUID, else the two
 * characters of a fragment's number (base64url digits, the high first). Every character of a
 * reference is ASCII, so a packed text is, as the JSON it stands for: SQLite then gives it, and
 * unpacking keeps it, as a string of one byte per character (a reference of one character above
 * U+00FF made every organization read a string of two, and every page written slower).
 */
const OWN_ID_REFERENCE = `${REFERENCE}!`;
const UUID_REFERENCE = `${REFERENCE}~`;
const UUID_BASE64_LENGTH = 22;
const MAX_FRAGMENTS = 64 * 64;

/** The key that is last in both forms of an organization (see render.ts withLastModified). */
const LAST_KEY = ',"last_modified":';
const ID_PREFIX = '{"id":"';
const ID_LENGTH = 36;

/** The fragments of one snapshot, as it unpacks its documents. */
export class Fragments {
  /** Each fragment's text, or where it holds the own id (a fragment of details), its parts around it. */
  private readonly texts: readonly (string | string[])[];

  /** `fragments`: each fragment's number and text (numbers may leave gaps: see FragmentNumbers). */
  constructor(fragments: Iterable<readonly [number, string]>) {
    const texts: (string | string[])[] = [];
    for (const [number, text] of fragments) texts[number] = text.includes(OWN_ID_REFERENCE) ? text.split(OWN_ID_REFERENCE) : text;
    this.texts = texts;
  }

  /** `packed` with every reference replaced by its text (`ownId` for the organization's own id). */
  unpack(packed: string, where: string, ownId?: string): string {
    let at = packed.indexOf(REFERENCE);
    if (at < 0) return packed;
    let text = '';
    let from = 0;
    while (at >= 0) {
      const kind = packed.charCodeAt(at + 1);
      text += packed.slice(from, at);
      if (kind === 0x7e /* ~ */) {
        from = at + 2 + UUID_BASE64_LENGTH;
        text += uuidOf(packed, at + 2);
      } else if (kind === 0x21 /* ! */) {
        from = at + 2;
        if (ownId === undefined) throw new AlteredDocument(`a document read from ${where} refers to an organization's own id where it has none`);
        text += ownId;
      } else {
        from = at + 3;
        const number = (BASE64URL_VALUES[kind]! << 6) | BASE64URL_VALUES[packed.charCodeAt(at + 2)]!;
        const fragment = this.texts[number];
        if (fragment === undefined || (typeof fragment !== 'string' && ownId === undefined)) {
          throw new AlteredDocument(`a document read from ${where} refers to fragment ${number}, which this snapshot lacks`);
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

/** A UUID's JSON (with its quotes) packed: its 16 bytes in base64url. */
function packedUuid(uuid: string): string {
  // Written here, not through a Buffer: four ids an organization, where a Buffer's making cost more than the rest of its packing.
  let packed = `"${UUID_REFERENCE}`;
  let bits = 0;
  let held = 0;
  for (let at = 0; at < uuid.length; at++) {
    const code = uuid.charCodeAt(at);
    if (code === 0x2d) continue;
    bits = (bits << 4) | (code <= 0x39 ? code - 0x30 : code - 0x57);
    held += 4;
    if (held >= 6) {
      held -= 6;
      packed += BASE64URL[(bits >> held) & 0x3f];
    }
  }
  return `${packed}${BASE64URL[(bits << (6 - held)) & 0x3f]}"`;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Each base64url character's value, by its code. */
const BASE64URL_VALUES = Array.from({ length: 128 }, (_, code) => Math.max(0, BASE64URL.indexOf(String.fromCharCode(code))));
/** Two base64url characters (12 bits) as three hex digits, by their values (the first times 64). */
const HEX_OF_PAIR = Array.from({ length: 4096 }, (_, bits) => bits.toString(16).padStart(3, '0'));

/**
 * A packed UUID's text (see packedUuid), read on every uncached organization: two characters at a
 * time through a table, not through a Buffer (which took more than the rest of the unpacking).
 */
function uuidOf(packed: string, from: number): string {
  let hex = '';
  for (let at = from; at < from + UUID_BASE64_LENGTH; at += 2) hex += HEX_OF_PAIR[(BASE64URL_VALUES[packed.charCodeAt(at)]! << 6) | BASE64URL_VALUES[packed.charCodeAt(at + 1)]!];
  // 22 characters hold 132 bits: the UUID's 128 and 4 of padding, the last hex digit.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** An organization's two packed texts: its listed form, and what its full form adds (see above). */
export interface OrganizationTexts {
  item: string;
  details: string;
}

/**
 * Gives pieces fragment numbers as they are first met, within a range: the render worker numbers what
 * it renders, the writer what it adds (the times of the publish), each in a range of its own, so that
 * neither waits for the other. Beyond its range a piece is written as it is.
 */
export class FragmentNumbers {
  private readonly references = new Map<string, string>();
  private next: number;
  private readonly end: number;
  /** Fragments numbered since the last call of takeNew. */
  private fresh: [number, string][] = [];

  constructor(range: { first: number; end: number }) {
    this.next = range.first;
    this.end = range.end;
  }

  /** The reference of `text`, numbered now if it is new; `text` itself once the range is full. */
  reference(text: string): string {
    let reference = this.references.get(text);
    if (reference !== undefined) return reference;
    if (this.next >= this.end) return text;
    reference = REFERENCE + BASE64URL[this.next >> 6] + BASE64URL[this.next & 0x3f];
    this.references.set(text, reference);
    this.fresh.push([this.next++, text]);
    return reference;
  }

  /** The fragments numbered since the last call. */
  takeNew(): [number, string][] {
    const fresh = this.fresh;
    this.fresh = [];
    return fresh;
  }
}

/** The numbers the writer gives (what depends on the publish: see withTails); the renderer's follow. */
export const WRITER_FRAGMENTS = { first: 0, end: 256 };
export const RENDERER_FRAGMENTS = { first: 256, end: MAX_FRAGMENTS };

/**
 * Keys whose values are few, however many organizations: each of their members (key and value) is a
 * fragment (`year_incorporated` a hundred-odd years, `location` the sources' files, `last_modified`
 * the publishes). A key whose values turn out many only fills its range of numbers sooner, after which
 * values are written as they are.
 */
const CATEGORICAL = new Set([
  'tax_status',
  'legal_status',
  'year_incorporated',
  'link_entity',
  'link_type',
  'label',
  'identifier_scheme',
  'identifier_type',
  'source',
  'location',
  'read_at',
  'last_modified',
  // Ids of the terms and taxonomies: a thousand-odd.
  'taxonomy_term_id',
  'taxonomy_id',
]);

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Writes values packed, as JSON.stringify writes them: the same keys in the same order, the same
 * escapes, nothing of what it leaves out (undefined values and functions in objects; `null` for them
 * in arrays). `whole`: objects written as one fragment each (a term's objects, which every organization
 * it classifies shares).
 */
export class PackingWriter {
  private readonly numbers: FragmentNumbers;
  private readonly whole: WeakSet<object>;
  /** By key: the references of its name, of its members of each value (CATEGORICAL), and of its member of the own id; after `{` and after `,`. */
  private readonly memberReferences = new Map<string, { name: Partial<Record<'{' | ',', string>>; values: Record<'{' | ',', Map<unknown, string>>; ownId: Partial<Record<'{' | ',', string>> }>();
  /** The references of the whole objects (see `whole`), once made. */
  private readonly wholeReferences = new WeakMap<object, string>();

  constructor(numbers: FragmentNumbers, whole: WeakSet<object> = new WeakSet()) {
    this.numbers = numbers;
    this.whole = whole;
  }

  /**
   * `value` packed; `ownId`: the organization's id, written as its reference, in details. UUIDs are
   * packed in details only: the listed form is what every page reads, and a UUID read back from its
   * bytes cost 6 µs of a page of 20 (0.3 µs each), for 12 bytes an organization.
   */
  value(value: unknown, key: string | undefined, ownId?: string): string {
    switch (typeof value) {
      case 'string':
        if (value === ownId) return `"${OWN_ID_REFERENCE}"`;
        if (ownId !== undefined && value.length === 36 && UUID_TEXT.test(value)) return packedUuid(value);
        return key !== undefined && CATEGORICAL.has(key) ? this.numbers.reference(JSON.stringify(value)) : JSON.stringify(value);
      case 'number':
      case 'boolean':
        return key !== undefined && CATEGORICAL.has(key) ? this.numbers.reference(JSON.stringify(value)) : JSON.stringify(value);
      case 'object':
        if (value === null) return 'null';
        if (Array.isArray(value)) return `[${value.map((item) => (item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : this.value(item, key, ownId))).join(',')}]`;
        if (this.whole.has(value)) {
          let reference = this.wholeReferences.get(value);
          if (reference === undefined) this.wholeReferences.set(value, (reference = this.numbers.reference(JSON.stringify(value))));
          return reference;
        }
        if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return this.value((value as { toJSON: (key: string) => unknown }).toJSON(key ?? ''), key, ownId);
        return `${this.members(value as Record<string, unknown>, 0, ownId)}}`;
      default:
        throw new Error(`cannot pack a value of type ${typeof value}`);
    }
  }

  /**
   * One member packed, after `punctuation` (`{` for an object's first, `,` for the others): one
   * fragment for the key and a value of few (CATEGORICAL, or the own id), else the key's fragment and
   * the value.
   */
  member(punctuation: '{' | ',', key: string, value: unknown, ownId?: string): string {
    // The references of a key's members are kept by key and value as given: no text is made, nor
    // hashed, to look one up (that was a third of the packing).
    let known = this.memberReferences.get(key);
    if (known === undefined) this.memberReferences.set(key, (known = { name: {}, values: { '{': new Map(), ',': new Map() }, ownId: {} }));
    if (value === ownId) return (known.ownId[punctuation] ??= this.numbers.reference(`${punctuation}${JSON.stringify(key)}:"${OWN_ID_REFERENCE}"`));
    if (CATEGORICAL.has(key) && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) {
      const values = known.values[punctuation];
      let reference = values.get(value);
      if (reference === undefined) values.set(value, (reference = this.numbers.reference(`${punctuation}${JSON.stringify(key)}:${JSON.stringify(value)}`)));
      return reference;
    }
    return (known.name[punctuation] ??= this.numbers.reference(`${punctuation}${JSON.stringify(key)}:`)) + this.value(value, key, ownId);
  }

  /**
   * The members of `object` from the `from`-th on, packed, each with the punctuation before it (`{`
   * before the object's first), without the closing brace.
   */
  members(object: Record<string, unknown>, from: number, ownId?: string): string {
    let packed = '';
    let index = 0;
    let written = 0;
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      const member = object[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      if (index++ < from) {
        written++;
        continue;
      }
      packed += this.member(written++ === 0 ? '{' : ',', key, member, ownId);
    }
    return written === 0 ? '{' : packed;
  }
}

/**
 * An organization's heads, packed as render.ts gives them (see PackingWriter): the listed form less its
 * closing brace, and the members the full form adds, without the closing brace of the provenance
 * when the publish adds its `read_at` (`addsReadAt`). The writer adds the tails (withTails).
 */
export function packedHeads(writer: PackingWriter, listItem: Record<string, unknown>, detail: Record<string, unknown>, id: string, addsReadAt: boolean): OrganizationTexts {
  const listedKeys = Object.keys(listItem).filter((key) => listItem[key] !== undefined).length;
  const details = writer.members(detail, listedKeys, id);
  return { item: writer.members(listItem, 0), details: addsReadAt ? details.slice(0, -1) : details };
}

/** An organization's texts as stored: its heads, then what the publish adds (`last_modified`, and `read_at` where it adds one). */
export function withTails(writer: PackingWriter, heads: OrganizationTexts, lastModified: string, readAt: string | undefined): OrganizationTexts {
  return {
    item: `${heads.item}${writer.member(',', 'last_modified', lastModified)}}`,
    details: readAt === undefined ? heads.details : `${heads.details}${writer.member(',', 'read_at', readAt)}}`,
  };
}
