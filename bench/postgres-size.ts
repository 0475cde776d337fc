/**
 * Where a PostgreSQL generation's bytes go (issue 40): each table of the live generation with its
 * heap, its TOAST (where PostgreSQL keeps, compressed, values over about 2 KB) and its indexes, from
 * pg_relation_size and pg_total_relation_size.
 *
 *   node bench/postgres-size.ts --database-url postgres://postgres@127.0.0.1:5432/DB
 *
 * Publish first, e.g. `node src/cli.ts import --database-url URL --migrate data/`. Prints a table and
 * writes bench/results/postgres-size-<time>.json.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { describeMachine, formatTable, gitRevision, machine, MIB, runMain, writeResults } from './lib/run.ts';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'database-url': { type: 'string' } } });
  if (values['database-url'] === undefined) {
    process.stderr.write('bench/postgres-size.ts needs --database-url: a database an import has published to\n');
    return 2;
  }
  const startedAt = new Date();
  const client = new pg.Client({ connectionString: values['database-url'] });
  await client.connect();
  try {
    const { rows: live } = await client.query<{ schema: string; format: number }>("SELECT 'hsds_g' || l.generation AS schema, g.format FROM hsds.live l JOIN hsds.generations g ON g.id = l.generation");
    const { schema, format } = live[0]!;
    const { rows } = await client.query<{ name: string; heap: string; toast: string; indexes: string; total: string }>(
      `SELECT c.relname AS name, pg_relation_size(c.oid) AS heap,
              coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS toast,
              pg_indexes_size(c.oid) AS indexes, pg_total_relation_size(c.oid) AS total
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC`,
      [schema],
    );
    const tables = rows.map((row) => ({ name: row.name, heap: Number(row.heap), toast: Number(row.toast), indexes: Number(row.indexes), total: Number(row.total) }));
    const total = tables.reduce((sum, table) => sum + table.total, 0);
    const report = { benchmark: 'postgres-size', startedAt: startedAt.toISOString(), machine: machine(), revision: gitRevision(), schema, format, totalBytes: total, tables };
    const written = writeResults('postgres-size', startedAt, report);
    const mib = (bytes: number) => (bytes / MIB).toFixed(1);
    process.stdout.write(
      [
        `${describeMachine(report.machine)}; commit ${report.revision.commit?.slice(0, 10) ?? 'unknown'}${report.revision.dirty ? ' (dirty)' : ''}`,
        `generation ${schema} (format ${format}): ${mib(total)} MiB`,
        formatTable(['table', 'heap MiB', 'TOAST MiB', 'indexes MiB', 'total MiB'], tables.filter((table) => table.total >= 1 << 20).map((table) => [table.name, mib(table.heap), mib(table.toast), mib(table.indexes), mib(table.total)]), new Set([0])),
        `results: ${written}`,
        '',
      ].join('\n'),
    );
  } finally {
    await client.end();
  }
  return 0;
}

runMain(main);
