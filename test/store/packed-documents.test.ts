import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AlteredDocument } from '../../src/store/document-check.ts';
import { FragmentNumbers, Fragments, packedHeads, PackingWriter, RENDERER_FRAGMENTS, withTails, WRITER_FRAGMENTS } from '../../src/store/packed-documents.ts';

/**
 * Packing must give back every byte JSON.stringify writes, whatever the text holds: control
 * characters, quotes and backslashes, braces inside strings, characters beyond the BMP, strings shaped
 * like UUIDs (in either case), the organization's own id inside its description, keys that read as
 * integers (which JSON.stringify writes first), and what it leaves out (undefined members).
 */

let seed = 7;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const uuid = () => Array.from({ length: 32 }, () => pick([...'0123456789abcdef'])).join('').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
const ODD = ['{"a":1}', '}],', '"quoted"', 'back\\slash', '\u0001\u0002', '\u2028', '😀 emoji', 'ÉTÉ', 'A1B2C3D4-E5F6-4789-9ABC-DEF012345678', '', ' ', ',"last_modified":'];
const TERMS = Array.from({ length: 12 }, (_, index) => ({ id: uuid(), code: `T${index}`, name: pick(ODD) + index }));
const CLASSIFICATIONS = TERMS.map((term) => ({ taxonomy: 'things', taxonomy_term_id: term.id, code: term.code, name: term.name }));

/** An organization's objects as render.ts makes them (without `last_modified`, nor a `read_at` the publish adds), and as served. */
function organization(index: number) {
  const id = uuid();
  const tagged = TERMS.map((term, at) => ({ term, classification: CLASSIFICATIONS[at]! })).filter(() => random() < 0.3);
  const lastModified = pick(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
  const readAt = random() < 0.5 ? undefined : lastModified;
  const listItem = {
    id,
    name: `${pick(['Shelter', 'Pantry', 'Clinic'])} ${pick(ODD)} ${index}`,
    description: random() < 0.5 ? '' : `${pick(ODD)} about ${id} ${pick(ODD)}`,
    tax_status: random() < 0.5 ? pick(['501(c)(3)', '501(c)(4)']) : undefined,
    year_incorporated: random() < 0.5 ? 1900 + Math.floor(random() * 120) : undefined,
    classifications: tagged.map(({ classification }) => classification),
  };
  const detail = {
    ...listItem,
    attributes: tagged.map(({ term }) => ({ id: uuid(), link_id: id, link_entity: 'organization', taxonomy_term_id: term.id, taxonomy_term: term })),
    organization_identifiers: [{ id: uuid(), organization_id: id, identifier: `${index}`.padStart(9, '0') }],
    provenance: { source: pick(['native files', 'HSDS package']), location: pick(ODD), source_id: `${index}` },
  };
  const served = { ...detail, provenance: { ...detail.provenance, ...(readAt === undefined ? {} : { read_at: readAt }) }, last_modified: lastModified };
  return { id, listItem, detail, readAt, lastModified, listed: JSON.stringify({ ...listItem, last_modified: lastModified }), full: JSON.stringify(served) };
}

describe('packed documents', () => {
  it('give back every byte of the listed and the full form, and take under a third of them', () => {
    const renderer = new FragmentNumbers(RENDERER_FRAGMENTS);
    const writer = new FragmentNumbers(WRITER_FRAGMENTS);
    const packing = new PackingWriter(renderer, new WeakSet([...TERMS, ...CLASSIFICATIONS]));
    const tails = new PackingWriter(writer);
    const organizations = Array.from({ length: 3_000 }, (_, index) => organization(index));
    const packed = organizations.map(({ id, listItem, detail, readAt, lastModified }) => withTails(tails, packedHeads(packing, listItem, detail, id, readAt !== undefined), lastModified, readAt));
    const fragments = new Fragments([...renderer.takeNew(), ...writer.takeNew()]);
    let packedBytes = 0;
    let plainBytes = 0;
    for (const [index, { item, details }] of packed.entries()) {
      const { listed, full } = organizations[index]!;
      assert.equal(fragments.unpack(item, 'test'), listed);
      assert.equal(fragments.organization(item, details, 'test'), full);
      packedBytes += Buffer.byteLength(item) + Buffer.byteLength(details);
      plainBytes += Buffer.byteLength(listed) + Buffer.byteLength(full);
    }
    assert.ok(packedBytes < plainBytes / 3, `${packedBytes} of ${plainBytes} bytes`);
  });

  it('write any value as JSON.stringify does', () => {
    const numbers = new FragmentNumbers(RENDERER_FRAGMENTS);
    const packing = new PackingWriter(numbers);
    const values: unknown[] = [
      { 2: 'two', 1: 'one', b: [1, undefined, null, () => 0, 'x'], a: undefined, f: () => 0, n: { deep: [{}, []] } },
      [new Date(0), { toJSON: () => 'mine' }, Number.NaN, -0, 1e21, true, false],
      { tax_status: '501(c)(3)', year_incorporated: 1999, label: null, location: ODD },
      ODD,
      {},
      [],
    ];
    const written = values.map((value) => packing.value(value, undefined));
    const fragments = new Fragments(numbers.takeNew());
    written.forEach((text, index) => assert.equal(fragments.unpack(text, 'test'), JSON.stringify(values[index])));
  });

  it('write what no number is left for as it is, and give it back the same', () => {
    const renderer = new FragmentNumbers({ first: 300, end: 303 });
    const writer = new FragmentNumbers({ first: 0, end: 1 });
    const packing = new PackingWriter(renderer, new WeakSet([...TERMS, ...CLASSIFICATIONS]));
    const tails = new PackingWriter(writer);
    const organizations = Array.from({ length: 200 }, (_, index) => organization(index));
    const packed = organizations.map(({ id, listItem, detail, readAt, lastModified }) => withTails(tails, packedHeads(packing, listItem, detail, id, readAt !== undefined), lastModified, readAt));
    const numbered = [...renderer.takeNew(), ...writer.takeNew()];
    assert.deepEqual(numbered.map(([number]) => number), [300, 301, 302, 0]);
    const fragments = new Fragments(numbered);
    for (const [index, { item, details }] of packed.entries()) {
      assert.equal(fragments.unpack(item, 'test'), organizations[index]!.listed);
      assert.equal(fragments.organization(item, details, 'test'), organizations[index]!.full);
    }
  });

  it('refuse a reference to a fragment the snapshot lacks, as an altered document', () => {
    const packing = new PackingWriter(new FragmentNumbers(RENDERER_FRAGMENTS));
    const packed = packing.value({ tax_status: '501(c)(3)' }, undefined);
    assert.ok(packed.includes('\u0001'));
    assert.throws(() => new Fragments([]).unpack(packed, 'the test'), AlteredDocument);
  });
});
