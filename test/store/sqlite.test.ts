import { join } from 'node:path';
import { buildSnapshot } from '../../src/build/build.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { temporaryDirectory } from '../helpers/app.ts';
import { describeStoreContract } from './contract.ts';

describeStoreContract('SQLite', async (input) => {
  const directory = temporaryDirectory();
  const file = join(directory.path, 'snapshot.sqlite');
  await buildSnapshot(input, file);
  const store = new SqliteStore(file);
  return {
    store,
    dispose: async () => {
      await store.close();
      directory.remove();
    },
  };
});
