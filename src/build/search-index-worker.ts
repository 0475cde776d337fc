import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { buildFilePragmas, createOrganizationIndexTables } from '../store/sqlite/schema.ts';
import { buildOrganizationIndex, INDEX_CACHE_KIB } from './search-index.ts';

/** The worker thread of search-index.ts: builds the ranked organization index in its file, from the organizations staged there. */
const { indexFile, keepSearchText } = workerData as { indexFile: string; keepSearchText: boolean };
try {
  const db = new DatabaseSync(indexFile, { defensive: false });
  db.exec(`${buildFilePragmas('main', INDEX_CACHE_KIB)} PRAGMA temp_store = FILE;`);
  db.exec(createOrganizationIndexTables(keepSearchText));
  buildOrganizationIndex(db, keepSearchText);
  db.close();
  parentPort!.postMessage({});
} catch (error) {
  parentPort!.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}
