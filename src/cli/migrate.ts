import pg from 'pg';
import { migrate } from '../store/postgres/migrate.ts';
import { counted } from '../text.ts';
import type { MigrateConfig } from '../config.ts';

/** `migrate`: applies the pending migrations to the PostgreSQL database. */
export async function runMigrate(config: MigrateConfig, writeResult: (line: string) => void): Promise<number> {
  const client = new pg.Client({ connectionString: config.databaseUrl, application_name: 'hsds-org-api migrate' });
  await client.connect();
  try {
    const applied = await migrate(client);
    writeResult(applied.length === 0 ? 'The database is up to date: no migration to apply.' : `Applied ${counted(applied.length, 'migration')}: ${applied.join(', ')}.`);
    return 0;
  } finally {
    await client.end();
  }
}
