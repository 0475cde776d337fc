import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { createOrganizationIndexTables } from '../store/sqlite-schema.ts';
import { buildOrganizationIndex } from './search-index.ts';

/** The worker thread of search-index.ts: builds the ranked organization index in its file, from the organizations staged there. */
const { indexFile, keepSearchText } = workerData as { indexFile: string; keepSearchText: boolean };
try {
  // Scratch, like the build's own file: no journal, no syncs (not in defensive mode, which ignores journal_mode = OFF).
  const db = new DatabaseSync(indexFile, { defensive: false });
  db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -2048;');
  db.exec(createOrganizationIndexTables(keepSearchText));
  buildOrganizationIndex(db, keepSearchText);
  db.close();
  parentPort!.postMessage({});
} catch (error) {
  parentPort!.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}
