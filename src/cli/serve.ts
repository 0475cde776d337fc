import closeWithGrace from 'close-with-grace';
import { buildApp } from '../http/app.ts';
import { DEFAULT_DATA_DIR } from '../publish/default-dataset.ts';
import { LiveSqliteStores } from '../store/live-sqlite.ts';
import { readPointer } from '../store/snapshot-directory.ts';
import { runImport } from './import.ts';
import type { ServeConfig } from '../config.ts';

/** `serve`: the API over the data directory's live snapshot, following each new publish. */
export async function runServe(config: ServeConfig, write: (line: string) => void): Promise<number> {
  if (readPointer(config.dataDir) === undefined) {
    write(`Nothing published in ${config.dataDir} yet: importing the default dataset from data/ (once).`);
    const code = await runImport(
      'import',
      { dataDir: config.dataDir, sources: [DEFAULT_DATA_DIR], maxErrors: 50, strict: false, progress: config.progress },
      write,
    );
    if (code !== 0) return code;
  }
  let log: { info(message: string): void; error(message: string): void } = { info: write, error: write };
  const stores = new LiveSqliteStores(config.dataDir, { info: (message) => log.info(message), error: (message) => log.error(message) });
  const app = await buildApp({
    stores,
    publicBaseUrl: config.publicBaseUrl,
    trustProxy: config.trustProxy,
    logLevel: config.logLevel,
    cacheMaxAge: config.cacheMaxAge,
    responseCacheBytes: config.responseCacheBytes,
  });
  log = { info: (message) => app.log.info(message), error: (message) => app.log.error(message) };
  closeWithGrace({ delay: 10_000 }, async ({ err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    await app.close();
  });
  await app.listen({ port: config.port, host: config.host });
  return 0;
}
