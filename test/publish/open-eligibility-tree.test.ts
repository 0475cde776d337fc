import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { taxonomyTermId } from '../../src/hsds/ids.ts';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';
import { API, getJson, startTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { inputFromSources } from '../helpers/sources.ts';

/**
 * The bundled Open Eligibility terms, served, against the official v2.0 XML they were converted from
 * (test/fixtures/open-eligibility/, CC BY-SA 3.0): every term's parent and children_count.
 */

const XML = readFileSync(new URL('../fixtures/open-eligibility/taxonomy_v2.0.xml', import.meta.url), 'utf8');
const CSV = join(DEFAULT_DATA_DIR, 'open-eligibility/open_eligibility_v2_terms.csv');

interface XmlTerm {
  facet: 'services' | 'situations';
  id: string;
  title: string;
  /**
   * 1 to 4, from the element's name (top_level to fourth_level), as in the CSV's `level`. Not always
   * the depth: `<third_level id="1170">` sits right inside `<top_level id="1104">`.
   */
  level: number;
  /** Index in the list of the enclosing term, if any. */
  parent?: number;
}

const LEVELS = ['top_level', 'second_level', 'third_level', 'fourth_level'];
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decode = (text: string) =>
  text.replace(/&(\w+);/g, (entity, name: string) => {
    assert.ok(name in ENTITIES, `unknown entity ${entity}`);
    return ENTITIES[name]!;
  });

/**
 * The terms of taxonomy_v2.0.xml in document (depth-first) order. A small parser for this known file:
 * elements with attributes in either quote, text only inside `<category>` and `<version>`; anything
 * else fails the test rather than be skipped.
 */
function parseTaxonomyXml(xml: string): XmlTerm[] {
  const terms: XmlTerm[] = [];
  const open: { name: string; term?: number }[] = [];
  const tag = /<(\/?)([a-z_]+)((?:\s+[a-z_]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*>/gy;
  let position = xml.indexOf('?>') + 2;
  assert.ok(xml.startsWith('<?xml ') && position > 1);
  while (position < xml.length) {
    const textEnd = xml.indexOf('<', position);
    const text = xml.slice(position, textEnd === -1 ? xml.length : textEnd);
    const inside = open.at(-1)?.name;
    if (inside !== 'category' && inside !== 'version') assert.match(text, /^\s*$/, `text outside a term at ${position}`);
    if (textEnd === -1) break;
    tag.lastIndex = textEnd;
    const match = tag.exec(xml);
    assert.ok(match, `unexpected markup at ${textEnd}: ${xml.slice(textEnd, textEnd + 40)}`);
    position = tag.lastIndex;
    const [, closing, name, attributeText] = match as unknown as [string, string, string, string];
    if (closing) {
      assert.equal(open.pop()?.name, name, `</${name}> closes what it did not open`);
      continue;
    }
    const attributes = Object.fromEntries(
      [...attributeText.matchAll(/([a-z_]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)].map((pair) => [pair[1]!, decode(pair[2] ?? pair[3]!)]),
    );
    const level = LEVELS.indexOf(name) + 1;
    if (level === 0) {
      open.push({ name });
      continue;
    }
    const facet = open.find((element) => element.name === 'services' || element.name === 'situations')?.name;
    assert.ok(facet === 'services' || facet === 'situations', `<${name}> outside a facet`);
    const parent = open.at(-1)?.term;
    assert.ok(parent === undefined ? level === 1 : terms[parent]!.level < level, `<${name} id="${attributes.id}"> is below its parent's level`);
    assert.match(attributes.id ?? '', /^\d+$/);
    assert.ok(attributes.title);
    terms.push({ facet, id: attributes.id!, title: attributes.title!.replace(/\s+/g, ' ').trim(), level, parent });
    open.push({ name, term: terms.length - 1 });
  }
  assert.deepEqual(open, [], 'every element is closed');
  return terms;
}

const xmlTerms = parseTaxonomyXml(XML);

/** The code each term is served with: its id, or `<id>-<n>` for the n-th occurrence of an id in its facet. */
const codes: string[] = (() => {
  const occurrences = new Map<string, number>();
  return xmlTerms.map((term) => {
    const key = `${term.facet}:${term.id}`;
    const occurrence = (occurrences.get(key) ?? 0) + 1;
    occurrences.set(key, occurrence);
    return occurrence === 1 ? term.id : `${term.id}-${occurrence}`;
  });
})();

const taxonomyOf = (term: XmlTerm) => (term.facet === 'services' ? 'oe_services' : 'oe_situations');

describe('the Open Eligibility tree, against the official v2.0 XML', () => {
  let test: TestApp;
  before(async () => {
    const { input, diagnostics } = await inputFromSources([CSV]);
    assert.deepEqual(diagnostics.errors, []);
    test = await startTestApp(input);
  });
  after(() => test?.close());

  async function servedTerms(taxonomy: string, query = ''): Promise<any[]> {
    const terms: any[] = [];
    for (let page = 1; ; page++) {
      const { status, body } = await getJson(test.app, `${API}/taxonomy_terms?taxonomy=${taxonomy}&per_page=100&page=${page}${query}`);
      assert.equal(status, 200);
      terms.push(...body.contents);
      if (body.last_page || body.contents.length === 0) return terms;
    }
  }

  it('parses the XML: 385 terms (291 services, 94 situations), one id used twice', () => {
    assert.equal(xmlTerms.length, 385);
    assert.equal(xmlTerms.filter((term) => term.facet === 'services').length, 291);
    assert.deepEqual(codes.filter((code) => code.includes('-')), ['1206-2']);
    const skipsALevel = xmlTerms.filter((term) => term.parent !== undefined && xmlTerms[term.parent]!.level !== term.level - 1);
    assert.deepEqual(skipsALevel.map((term) => term.id), ['1170'], 'Goods > Assistive Technology is a <third_level> right under Goods');
  });

  it('serves every term, in source order, with the parent and children_count of the XML', async () => {
    const served = [...(await servedTerms('oe_services')), ...(await servedTerms('oe_situations'))];
    assert.equal(served.length, xmlTerms.length);
    const wrong: string[] = [];
    xmlTerms.forEach((term, index) => {
      const got = served[index];
      const taxonomy = taxonomyOf(term);
      const parent = term.parent === undefined ? undefined : taxonomyTermId(taxonomy, codes[term.parent]!);
      const childrenCount = xmlTerms.filter((other) => other.parent === index).length;
      const expected = { taxonomy, code: codes[index], name: term.title, parent_id: parent, children_count: childrenCount };
      const actual = { taxonomy: got.taxonomy, code: got.code, name: got.name, parent_id: got.parent_id, children_count: got.children_count };
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${JSON.stringify(actual)} should be ${JSON.stringify(expected)}`);
    });
    assert.deepEqual(wrong, [], `${wrong.length} of ${xmlTerms.length} terms differ from the XML`);
  });

  it('lists the children of Medical Care (1206) and of Primary Care (1206-2) as the XML nests them', async () => {
    const medicalCare = xmlTerms.findIndex((term) => term.title === 'Medical Care');
    const children = (await servedTerms('oe_services', '&parent_id=oe_services:1206')).map((term) => term.code);
    assert.deepEqual(children, codes.filter((_, index) => xmlTerms[index]!.parent === medicalCare));
    assert.equal(children.length, 9);
    assert.deepEqual(children.slice(0, 3), ['1206-2', '1207', '1208']);
    assert.deepEqual(await servedTerms('oe_services', '&parent_id=oe_services:1206-2'), []);
  });
});
