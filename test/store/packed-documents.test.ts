import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AlteredDocument } from '../../src/store/document-check.ts';
import { FragmentMaker, Fragments, organizationHeads, organizationTails, Packer } from '../../src/store/packed-documents.ts';

/**
 * Packing must give back every byte, whatever the text holds: control characters, quotes and
 * backslashes, braces inside strings, characters beyond the BMP, strings shaped like UUIDs (in either
 * case), the organization's own id inside its description, and text no sample held.
 */

let seed = 7;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const uuid = () => Array.from({ length: 32 }, () => pick([...'0123456789abcdef'])).join('').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
const ODD = ['{"a":1}', '}],', '"quoted"', 'back\\slash', '\u0001\u0002', '\u2028', '😀 emoji', 'ÉTÉ', 'A1B2C3D4-E5F6-4789-9ABC-DEF012345678', '', ' ', ',"last_modified":'];
const TERMS = Array.from({ length: 12 }, (_, index) => ({ id: uuid(), code: `T${index}`, name: pick(ODD) + index }));

/** An organization as render.ts gives it (without `last_modified`, and without a `read_at` the publish adds), and as served. */
function organization(index: number) {
  const id = uuid();
  const terms = TERMS.filter(() => random() < 0.3);
  const lastModified = pick(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
  const readAt = random() < 0.5 ? undefined : lastModified;
  const item = {
    id,
    name: `${pick(['Shelter', 'Pantry', 'Clinic'])} ${pick(ODD)} ${index}`,
    description: random() < 0.5 ? '' : `${pick(ODD)} about ${id} ${pick(ODD)}`,
    ...(random() < 0.5 ? { tax_status: pick(['501(c)(3)', '501(c)(4)']) } : {}),
    classifications: terms.map((term) => ({ taxonomy: 'things', taxonomy_term_id: term.id, code: term.code, name: term.name })),
  };
  const full = {
    ...item,
    attributes: terms.map((term) => ({ id: uuid(), link_id: id, link_entity: 'organization', taxonomy_term_id: term.id, taxonomy_term: term })),
    organization_identifiers: [{ id: uuid(), organization_id: id, identifier: `${index}`.padStart(9, '0') }],
    provenance: { source: pick(['native files', 'HSDS package']), location: pick(ODD), source_id: `${index}` },
  };
  const served = { ...full, provenance: { ...full.provenance, ...(readAt === undefined ? {} : { read_at: readAt }) }, last_modified: lastModified };
  return {
    heads: organizationHeads(JSON.stringify(item), JSON.stringify(full), id, readAt !== undefined),
    tails: organizationTails(lastModified, readAt),
    listed: JSON.stringify({ ...item, last_modified: lastModified }),
    full: JSON.stringify(served),
  };
}

describe('packed documents', () => {
  it('give back every byte of the listed and the full form, whatever their text, with fragments made from a sample or none', () => {
    const organizations = Array.from({ length: 3_000 }, (_, index) => organization(index));
    for (const sampled of [0, 200, 3_000]) {
      const maker = new FragmentMaker(TERMS.map((term) => JSON.stringify(term).slice(1, -1)));
      for (const { heads, tails } of organizations.slice(0, sampled)) for (const text of [heads.item, heads.details, tails.item, tails.details]) maker.observe(text);
      const texts = maker.fragments();
      const packer = new Packer(texts);
      const fragments = new Fragments(texts);
      let packedBytes = 0;
      for (const [index, { heads, tails, listed, full }] of organizations.entries()) {
        // Packed beside the rendering, or with the tails: the same bytes.
        const { item, details } = packer.organization(heads, index % 2 === 0 ? packer.heads(heads) : undefined, tails);
        packedBytes += Buffer.byteLength(item) + Buffer.byteLength(details);
        assert.equal(fragments.unpack(item, 'test'), listed);
        assert.equal(fragments.organization(item, details, 'test'), full);
      }
      const plainBytes = organizations.reduce((sum, { listed, full }) => sum + Buffer.byteLength(listed) + Buffer.byteLength(full), 0);
      if (sampled > 0) assert.ok(packedBytes < plainBytes / 3, `${sampled} sampled: ${packedBytes} of ${plainBytes} bytes`);
    }
  });

  it('refuse a reference to a fragment the snapshot lacks, as an altered document', () => {
    const maker = new FragmentMaker();
    const { heads } = organization(1);
    for (let copy = 0; copy < 10; copy++) maker.observe(heads.item);
    const packed = new Packer(maker.fragments()).pack(heads.item);
    assert.ok(packed.includes('\u0001'));
    assert.throws(() => new Fragments([]).unpack(packed, 'the test'), AlteredDocument);
  });
});
