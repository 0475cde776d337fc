import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { buildSnapshot } from '../../src/build/build.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { temporaryDirectory } from './app.ts';
import type { DatasetSample } from './default-dataset-sample.ts';
import { postgresSuite, publishedDatabase } from './postgres.ts';

interface Opened {
  store: Store;
  dispose: () => Promise<void>;
}

async function openSqlite(input: DatasetInput): Promise<Opened> {
  const directory = temporaryDirectory();
  await buildSnapshot(input, join(directory.path, 'snapshot.sqlite'));
  const store = new SqliteStore(join(directory.path, 'snapshot.sqlite'));
  return {
    store,
    dispose: async () => {
      await store.close();
      directory.remove();
    },
  };
}

async function openPostgres(input: DatasetInput): Promise<Opened> {
  const { stores, dispose } = await publishedDatabase(input);
  return { store: stores.acquire().store, dispose };
}

/**
 * Runs `suite` on a dataset sample published to each store, SQLite and (when it is up) PostgreSQL,
 * so that both answer the same questions. `store()` is the open store, inside the suite's tests.
 */
export function onBothStores(title: string, sampleOf: () => Promise<DatasetSample>, suite: (store: () => Store) => void): void {
  const run = (label: string, open: (input: DatasetInput) => Promise<Opened>) =>
    describe(`${title}: ${label}`, () => {
      let sample: DatasetSample | undefined;
      let opened: Opened | undefined;
      before(async () => {
        sample = await sampleOf();
        opened = await open(sample.input);
      });
      after(async () => {
        await opened?.dispose();
        sample?.remove();
      });
      suite(() => opened!.store);
    });
  run('SQLite', openSqlite);
  describe('PostgreSQL', postgresSuite, () => run('PostgreSQL', openPostgres));
}
