/**
 * Where a snapshot's bytes go (issue 40): `npm run bench:snapshot-size -- [--data-dir DIR] [--sample N]`.
 *
 * - Per table and index: bytes on disk (SQLite's dbstat), rows, and for the JSON tables the bytes of
 *   the JSON (as stored: packed, for organizations).
 * - The organizations' two forms: bytes as stored (packed, see src/store/packed-documents.ts) and as
 *   served, and on a sample spread over the dataset the time to unpack one (what an uncached read pays
 *   besides SQLite).
 * Prints tables and writes bench/results/snapshot-size-<time>.json.
 */
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { describeMachine, formatTable, gitRevision, log, machine, MIB, runMain, writeResults } from './lib/run.ts';
import { liveSnapshot, servedBundled } from './lib/served.ts';
import { resolve } from 'node:path';
import { snapshotFragments } from '../src/store/sqlite/snapshot-file.ts';


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

  log('the organizations as stored and as served ...');
  const fragments = snapshotFragments(db);
  let organizations = 0;
  const stored = { items: 0, details: 0 };
  const served = { items: 0, documents: 0 };
  for (const { item, details } of db.prepare('SELECT i.json AS item, d.json AS details FROM organization_items i JOIN organization_documents d USING (position)').iterate() as Iterable<{ item: string; details: string }>) {
    organizations++;
    stored.items += Buffer.byteLength(item);
    stored.details += Buffer.byteLength(details);
    served.items += Buffer.byteLength(fragments.unpack(item, 'bench'));
    served.documents += Buffer.byteLength(fragments.organization(item, details, 'bench'));
  }
  const count = Math.min(Number(values.sample), organizations);
  log(`a sample of ${count} organizations: the time to unpack each ...`);
  const step = Math.max(1, Math.floor(organizations / count));
  const sample = db.prepare('SELECT i.json AS item, d.json AS details FROM organization_items i JOIN organization_documents d USING (position) WHERE (position - 1) % ? = 0 LIMIT ?').all(step, count) as Array<{ item: string; details: string }>;
  const unpack = {
    itemMicroseconds: timePerItem(sample, (row) => fragments.unpack(row.item, 'bench')),
    documentMicroseconds: timePerItem(sample, (row) => fragments.organization(row.item, row.details, 'bench')),
  };

  const report = {
    benchmark: 'snapshot-size',
    startedAt: startedAt.toISOString(),
    machine: machine(),
    revision: gitRevision(),
    snapshot: file,
    totalBytes: total,
    tables,
    organizations,
    fragments: (db.prepare('SELECT count(*) AS n FROM document_fragments').get() as { n: number }).n,
    stored,
    served,
    unpack: { sample: sample.length, ...unpack },
  };
  const written = writeResults('snapshot-size', startedAt, report);
  const mib = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / MIB).toFixed(1));
  const perOrganization = (bytes: number) => (organizations === 0 ? '-' : Math.round(bytes / organizations).toLocaleString('en-US'));
  process.stdout.write(
    [
      `${describeMachine(report.machine)}; commit ${report.revision.commit?.slice(0, 10) ?? 'unknown'}${report.revision.dirty ? ' (dirty)' : ''}`,
      `${file}: ${mib(total)} MiB`,
      formatTable(['table or index', 'MiB', 'share', 'rows', 'JSON MiB'], tables.filter((table) => table.bytes >= 1 << 16).map((table) => [table.name, mib(table.bytes), `${((table.bytes / total) * 100).toFixed(1)}%`, table.rows?.toLocaleString('en-US') ?? '-', mib(table.json)]), new Set([0])),
      '',
      `${organizations.toLocaleString('en-US')} organizations, packed with ${report.fragments.toLocaleString('en-US')} fragments (see src/store/packed-documents.ts):`,
      formatTable(
        ['form', 'stored MiB', 'bytes each', 'served MiB', 'bytes each', 'unpack µs each'],
        [
          ['listed (organization_items)', mib(stored.items), perOrganization(stored.items), mib(served.items), perOrganization(served.items), unpack.itemMicroseconds.toFixed(2)],
          ['full (items and organization_documents)', mib(stored.items + stored.details), perOrganization(stored.items + stored.details), mib(served.documents), perOrganization(served.documents), unpack.documentMicroseconds.toFixed(2)],
        ],
        new Set([0]),
      ),
      `results: ${written}`,
      '',
    ].join('\n'),
  );
  return 0;
}

runMain(main);
