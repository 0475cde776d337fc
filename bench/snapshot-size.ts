/**
 * Where a snapshot's bytes go (issue 40), and what each way of storing the organizations' documents
 * in less would save and cost: `npm run bench:snapshot-size -- [--data-dir DIR] [--sample N]`.
 *
 * - Per table and index: bytes on disk (SQLite's dbstat), rows, and for the JSON tables the bytes of
 *   the JSON itself.
 * - In the full documents: how much is the `taxonomy_term` objects nested in `attributes` (the same
 *   few hundred term objects, descriptions included, repeated in every organization).
 * - On a sample of documents spread over the dataset: the size of each after (a) deflate, (b) deflate
 *   with a dictionary made of the distinct term objects, (c) zstd, (d) the term objects taken out (a
 *   reference to each in their place), and (e) (d) then deflate with the dictionary; and the time to
 *   restore one document from each, per document (what an uncached read would pay).
 * Prints tables and writes bench/results/snapshot-size-<time>.json.
 */
import { DatabaseSync } from 'node:sqlite';
import { constants, deflateRawSync, inflateRawSync, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, runMain, writeResults } from './lib/run.ts';
import { liveSnapshot, servedBundled } from './lib/served.ts';
import { resolve } from 'node:path';

type Json = Record<string, unknown>;

/** Microseconds per call of `run` over `items`, best of three rounds. */
function timePerItem<T>(items: readonly T[], run: (item: T) => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    for (const item of items) run(item);
    best = Math.min(best, ((performance.now() - started) * 1000) / items.length);
  }
  return best;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, sample: { type: 'string', default: '20000' } } });
  const startedAt = new Date();
  const dataDir = values['data-dir'] === undefined ? await servedBundled() : resolve(values['data-dir']);
  const file = liveSnapshot(dataDir);
  const db = new DatabaseSync(file, { readOnly: true });
  log(`${file}: bytes per table and index ...`);
  const objects = db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC").all() as Array<{ name: string; bytes: number }>;
  const total = objects.reduce((sum, object) => sum + object.bytes, 0);
  const rowsOf = (name: string): number | undefined => {
    try {
      return (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
    } catch {
      return undefined; // an index
    }
  };
  const jsonBytes = (table: string): number | undefined => {
    try {
      return (db.prepare(`SELECT sum(length(CAST(json AS BLOB))) AS n FROM "${table}"`).get() as { n: number }).n;
    } catch {
      return undefined;
    }
  };
  const tables = objects.map((object) => ({ ...object, rows: rowsOf(object.name), json: jsonBytes(object.name) }));

  log('the term objects nested in the full documents ...');
  let nestedTermBytes = 0;
  let documents = 0;
  const distinctTerms = new Map<string, number>();
  for (const { json } of db.prepare('SELECT json FROM organization_documents').iterate() as Iterable<{ json: string }>) {
    documents++;
    const document = JSON.parse(json) as { attributes?: Array<{ taxonomy_term?: Json }> };
    for (const attribute of document.attributes ?? []) {
      if (attribute.taxonomy_term === undefined) continue;
      const text = JSON.stringify(attribute.taxonomy_term);
      nestedTermBytes += Buffer.byteLength(text);
      distinctTerms.set(text, (distinctTerms.get(text) ?? 0) + 1);
    }
  }

  const count = Math.min(Number(values.sample), documents);
  log(`a sample of ${count} documents: each way of storing them ...`);
  const step = Math.max(1, Math.floor(documents / count));
  const sample = (db.prepare('SELECT json FROM organization_documents WHERE (position - 1) % ? = 0 LIMIT ?').all(step, count) as Array<{ json: string }>).map((row) => Buffer.from(row.json));
  // The dictionary: the distinct term objects, most used last (deflate looks back from the end), at most 32 KiB.
  const byUse = [...distinctTerms.entries()].sort((a, b) => a[1] - b[1]).map(([text]) => text);
  let dictionaryText = '';
  for (let index = byUse.length - 1; index >= 0 && Buffer.byteLength(dictionaryText) + Buffer.byteLength(byUse[index]!) < 32 * 1024; index--) dictionaryText = byUse[index]! + dictionaryText;
  const dictionary = Buffer.from(dictionaryText);
  const termIndex = new Map(byUse.map((text, index) => [text, index]));
  /** A document with each nested term object replaced by its number in the table of distinct ones. */
  const factored = (document: Buffer): Buffer => {
    const parsed = JSON.parse(document.toString()) as { attributes?: Array<Record<string, unknown>> };
    for (const attribute of parsed.attributes ?? []) {
      if (attribute.taxonomy_term !== undefined) attribute.taxonomy_term = termIndex.get(JSON.stringify(attribute.taxonomy_term));
    }
    return Buffer.from(JSON.stringify(parsed));
  };
  const level = { level: 6 };
  const ways = [
    { name: 'as stored (JSON)', make: (document: Buffer) => document, restore: (stored: Buffer) => stored.toString() },
    { name: 'deflate', make: (document: Buffer) => deflateRawSync(document, level), restore: (stored: Buffer) => inflateRawSync(stored).toString() },
    { name: 'deflate + term dictionary', make: (document: Buffer) => deflateRawSync(document, { ...level, dictionary }), restore: (stored: Buffer) => inflateRawSync(stored, { dictionary }).toString() },
    { name: 'zstd (level 3)', make: (document: Buffer) => zstdCompressSync(document, { params: { [constants.ZSTD_c_compressionLevel]: 3 } }), restore: (stored: Buffer) => zstdDecompressSync(stored).toString() },
    // Restoring puts the term objects back: a parse and a stringify (what assembling would cost at most).
    {
      name: 'terms taken out',
      make: factored,
      restore: (stored: Buffer) => {
        const parsed = JSON.parse(stored.toString()) as { attributes?: Array<Record<string, unknown>> };
        for (const attribute of parsed.attributes ?? []) if (typeof attribute.taxonomy_term === 'number') attribute.taxonomy_term = JSON.parse(byUse[attribute.taxonomy_term]!);
        return JSON.stringify(parsed);
      },
    },
    { name: 'terms out + deflate + dictionary', make: (document: Buffer) => deflateRawSync(factored(document), { ...level, dictionary }), restore: (stored: Buffer) => inflateRawSync(stored, { dictionary }).toString() },
  ];
  const sampleBytes = sample.reduce((sum, document) => sum + document.length, 0);
  const results = ways.map((way) => {
    const stored = sample.map(way.make);
    const bytes = stored.reduce((sum, item) => sum + item.length, 0);
    return { name: way.name, bytes, share: bytes / sampleBytes, restoreMicroseconds: timePerItem(stored, way.restore) };
  });

  const report = {
    benchmark: 'snapshot-size',
    startedAt: startedAt.toISOString(),
    machine: machine(),
    revision: gitRevision(),
    snapshot: file,
    totalBytes: total,
    tables,
    documents,
    nestedTermBytes,
    distinctTermObjects: distinctTerms.size,
    dictionaryBytes: dictionary.length,
    sample: { documents: sample.length, bytes: sampleBytes, ways: results },
  };
  const written = writeResults('snapshot-size', startedAt, report);
  const mib = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / MIB).toFixed(1));
  const documentBytes = tables.find((table) => table.name === 'organization_documents')!;
  process.stdout.write(
    [
      `${describeMachine(report.machine)}; commit ${report.revision.commit?.slice(0, 10) ?? 'unknown'}${report.revision.dirty ? ' (dirty)' : ''}`,
      `${file}: ${mib(total)} MiB`,
      formatTable(['table or index', 'MiB', 'share', 'rows', 'JSON MiB'], tables.filter((table) => table.bytes >= 1 << 16).map((table) => [table.name, mib(table.bytes), `${((table.bytes / total) * 100).toFixed(1)}%`, table.rows?.toLocaleString('en-US') ?? '-', mib(table.json)]), new Set([0])),
      '',
      `full documents: ${documents.toLocaleString('en-US')}, ${mib(documentBytes.json)} MiB of JSON, of which ${mib(nestedTermBytes)} MiB (${((nestedTermBytes / (documentBytes.json ?? 1)) * 100).toFixed(1)}%) are nested taxonomy_term objects: ${distinctTerms.size} distinct ones`,
      `a sample of ${sample.length.toLocaleString('en-US')} documents (${mib(sampleBytes)} MiB), stored each way (dictionary: ${dictionary.length.toLocaleString('en-US')} bytes of term objects):`,
      formatTable(['way', 'MiB', 'of JSON', 'restore µs/doc'], results.map((result) => [result.name, mib(result.bytes), `${(result.share * 100).toFixed(1)}%`, result.restoreMicroseconds.toFixed(2)]), new Set([0])),
      `results: ${written}`,
      '',
    ].join('\n'),
  );
  return 0;
}

runMain(main);
