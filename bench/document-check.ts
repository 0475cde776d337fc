/**
 * What checking a stored document costs (src/store/document-check.ts): the CRC-32 of organization
 * documents and list items as a published snapshot holds them, per document and per page of 20.
 *
 * Usage: node bench/document-check.ts --data-dir DIR [--rounds 3]
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { documentCheck } from '../src/store/document-check.ts';
import { readPointer, snapshotsPath } from '../src/store/sqlite/snapshot-directory.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, rounds: { type: 'string', default: '3' } } });
if (values['data-dir'] === undefined) throw new Error('Usage: node bench/document-check.ts --data-dir DIR [--rounds 3]');
const directory = snapshotsPath(values['data-dir']);
const name = readPointer(values['data-dir']) ?? readdirSync(directory).find((file) => file.endsWith('.sqlite'))!;
const db = new DatabaseSync(join(directory, name), { readOnly: true });
const sample = (table: string) => db.prepare(`SELECT json FROM ${table} WHERE position BETWEEN 100000 AND 100999`).all().map((row) => row.json as string);
const documents = sample('organization_documents');
const items = sample('organization_items');
const bytes = (texts: string[]) => Math.round(texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / texts.length);
console.log(`${name}: documents of ${bytes(documents)} bytes and list items of ${bytes(items)} on average (1,000 of each)`);
const perCheck = (texts: string[], repeats: number): number => {
  let sink = 0;
  const started = performance.now();
  for (let round = 0; round < repeats; round++) for (const text of texts) sink ^= documentCheck(text);
  if (sink === 0.5) console.log(sink);
  return ((performance.now() - started) * 1000) / (repeats * texts.length);
};
for (let round = 1; round <= Number(values.rounds); round++) {
  const document = perCheck(documents, 200);
  const item = perCheck(items, 200);
  console.log(`round ${round}: ${document.toFixed(2)} µs per document, ${item.toFixed(2)} µs per list item, ${(item * 20).toFixed(1)} µs per page of 20`);
}
