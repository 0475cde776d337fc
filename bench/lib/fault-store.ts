/**
 * The store the fault benchmark (bench/faults.ts) breaks: a copy of the published synthetic dataset,
 * what dead imports left in it, and SQLite's own check of the live snapshot.
 */
import { linkSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { CACHE_DIR, log } from './run.ts';
import { benchDatabaseName, databaseUrl, liveSnapshot, servedSynthetic, servedSyntheticPostgres } from './served.ts';
import type { Served } from './served.ts';

/** A copy of the published synthetic dataset to break: a data directory of hard links, or a database made from it as a template. */
export async function workingCopy(store: string, serverUrl: string, organizations: number, seed: number): Promise<Served> {
  if (store === 'sqlite') {
    const base = await servedSynthetic(organizations, seed);
    const dataDir = join(CACHE_DIR, `faults-${organizations}-${seed}`);
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(join(dataDir, 'snapshots'), { recursive: true });
    const snapshot = liveSnapshot(base);
    // Snapshots (and their checksums) are never written once published: a link is a copy.
    for (const file of [snapshot, `${snapshot}.sha256`]) linkSync(file, join(dataDir, 'snapshots', basename(file)));
    writeFileSync(join(dataDir, 'current'), `${basename(snapshot)}\n`);
    return { dataDir };
  }
  await servedSyntheticPostgres(serverUrl, organizations, seed);
  const name = `hsds_faults_${organizations}_${seed}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    log(`Copying ${benchDatabaseName(organizations, seed)} into ${name} ...`);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${benchDatabaseName(organizations, seed)}`);
  } finally {
    await admin.end();
  }
  return { databaseUrl: databaseUrl(serverUrl, name) };
}

/** What dead imports can leave behind: files in the data directory, or generations in PostgreSQL. */
export async function leftovers(served: Served): Promise<string[]> {
  if ('dataDir' in served) {
    const { dataDir } = served;
    const snapshots = readdirSync(join(dataDir, 'snapshots'))
      .filter((name) => !name.endsWith('.sqlite') && !name.endsWith('.sqlite.sha256'))
      .map((name) => `snapshots/${name}`);
    return [...readdirSync(dataDir).filter((name) => name !== 'current' && name !== 'snapshots'), ...snapshots];
  }
  const client = new pg.Client({ connectionString: served.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'hsds_g%' AND nspname NOT IN (SELECT 'hsds_g' || id FROM hsds.generations)");
    return rows.map((row) => `schema ${row.nspname}`);
  } finally {
    await client.end();
  }
}

/** Nothing wrong with the snapshot file, by SQLite's own check; null for PostgreSQL. */
export function quickCheck(served: Served): string | null {
  if (!('dataDir' in served)) return null;
  const db = new DatabaseSync(liveSnapshot(served.dataDir), { readOnly: true });
  try {
    return (db.prepare('PRAGMA quick_check').get() as { quick_check: string }).quick_check;
  } finally {
    db.close();
  }
}
