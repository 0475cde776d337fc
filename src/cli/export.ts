import { mkdirSync, readdirSync } from 'node:fs';
import { openPublished } from './published-stores.ts';
import { writeTabularPackage } from '../exchange/tabular-package.ts';
import { counted } from '../text.ts';
import type { ExportConfig } from '../config.ts';

/** `export`: the live dataset as an HSDS tabular package, written into a new or empty folder. */
export async function runExport(config: ExportConfig, write: (line: string) => void, writeResult: (line: string) => void): Promise<number> {
  let existing: string[] = [];
  try {
    existing = readdirSync(config.directory);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error;
  }
  if (existing.length > 0) {
    write(`${config.directory} is not empty (${counted(existing.length, 'entry', 'entries')}): give a new or empty folder, so that no file of another package is left beside this one.`);
    return 1;
  }
  const opened = await openPublished(config.dataDir, config.databaseUrl);
  if (opened === undefined) {
    write(`Nothing to export: no dataset has been published in ${config.dataDir}.`);
    return 1;
  }
  const { stores, problems } = opened;
  const lease = stores.acquire();
  try {
    const readiness = await stores.readiness();
    if (!readiness.ready) {
      write(`Nothing to export: ${readiness.reason ?? problems.join('; ')}`);
      return 1;
    }
    mkdirSync(config.directory, { recursive: true });
    const started = performance.now();
    const written = await writeTabularPackage(lease.store, config.directory);
    const { rows } = written;
    writeResult(
      `Exported dataset ${written.version} into ${config.directory}: ${counted(rows.organization, 'organization')}, ${counted(rows.taxonomy, 'taxonomy', 'taxonomies')}, ` +
        `${counted(rows.taxonomy_term, 'taxonomy term')}, ${counted(rows.attribute, 'attribute')}, ${counted(rows.organization_identifier, 'organization identifier')}, ` +
        `${counted(rows.url, 'url')}. Took ${((performance.now() - started) / 1000).toFixed(1)} s, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB.`,
    );
    return 0;
  } finally {
    lease.release();
    await stores.close();
  }
}
