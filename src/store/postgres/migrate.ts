import { readdirSync, readFileSync } from 'node:fs';
import type { ClientBase } from 'pg';

/**
 * Versioned migrations of the control schema `hsds`: SQL files in ./migrations named
 * `<number>_<what>.sql`, applied in order, each once, recorded in hsds.schema_migrations. Applied
 * by `hsds-org-api migrate`, or by `serve` and `import` given --migrate. An advisory lock lets
 * several instances start at once.
 */

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Any fixed number, the same for every instance: the advisory lock of migrations. */
const MIGRATION_LOCK = 0x4853_4453_01;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function migrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d+_[\w-]+\.sql$/.test(file))
    .map((file) => ({ version: Number(file.slice(0, file.indexOf('_'))), name: file.replace(/\.sql$/, ''), sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** The migrations not yet applied to this database, in order (all of them when none ever was). */
export async function pendingMigrations(client: ClientBase): Promise<Migration[]> {
  const table = await client.query<{ exists: boolean }>("SELECT to_regclass('hsds.schema_migrations') IS NOT NULL AS exists");
  if (!table.rows[0]!.exists) return migrations();
  const applied = new Set((await client.query<{ version: number }>('SELECT version FROM hsds.schema_migrations')).rows.map((row) => row.version));
  return migrations().filter((migration) => !applied.has(migration.version));
}

/** Applies every pending migration in one transaction; returns the names of those applied. */
export async function migrate(client: ClientBase): Promise<string[]> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`
      CREATE SCHEMA IF NOT EXISTS hsds;
      CREATE TABLE IF NOT EXISTS hsds.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const pending = await pendingMigrations(client);
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query('INSERT INTO hsds.schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    await client.query('COMMIT');
    return pending.map((migration) => migration.name);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
