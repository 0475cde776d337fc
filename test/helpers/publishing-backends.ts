import { statSync } from 'node:fs';
import type { ChangesFromPrevious } from '../../src/build/history.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';
import { publishDataset } from '../../src/publish/publish.ts';
import { publishToPostgres } from '../../src/publish/publish-postgres.ts';
import { PostgresStores } from '../../src/store/postgres/live.ts';
import { currentSnapshotPath } from '../../src/store/sqlite/snapshot-directory.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import type { StoreProvider } from '../../src/store/store.ts';
import { temporaryDirectory } from './app.ts';
import { postgresSuite, quietLog, temporaryDatabase, testSettings } from './postgres.ts';

/** A place datasets are published to, one after the other, at the times given, and served from. */
export interface Publisher {
  publish(input: DatasetInput, at: Date): Promise<{ version: string; fromPrevious: ChangesFromPrevious | undefined }>;
  /** The stores of what is live now. */
  stores(): Promise<StoreProvider>;
  /** The live snapshot's size in bytes, where there is a file. */
  size(): number | undefined;
  dispose(): Promise<void>;
}

/** Both stores, each publishing into a data directory or a database of its own (PostgreSQL's suite skipped where it is not up). */
export const PUBLISHING_BACKENDS: { name: string; options: { skip?: string | boolean }; start: () => Promise<Publisher> }[] = [
  {
    name: 'SQLite',
    options: {},
    async start() {
      const data = temporaryDirectory();
      return {
        publish: async (input, at) => {
          const { version, fromPrevious } = await publishDataset(input, data.path, { now: () => at });
          return { version, fromPrevious };
        },
        stores: async () => fixedStore(new SqliteStore(currentSnapshotPath(data.path)!)),
        size: () => statSync(currentSnapshotPath(data.path)!).size,
        dispose: async () => data.remove(),
      };
    },
  },
  {
    name: 'PostgreSQL',
    options: postgresSuite,
    async start() {
      const database = await temporaryDatabase();
      return {
        publish: async (input, at) => {
          const { version, fromPrevious } = await publishToPostgres(input, { url: database.url, migrate: true }, { now: () => at });
          return { version, fromPrevious };
        },
        stores: () => PostgresStores.open(testSettings(database.url), quietLog),
        size: () => undefined,
        dispose: () => database.drop(),
      };
    },
  },
];
