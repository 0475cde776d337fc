/**
 * The synthetic dataset (bench/generate-synthetic.ts), generated once per size and seed and kept in
 * bench/.cache/ with a marker that says it is complete.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CACHE_DIR, REPO, log, runNode } from './run.ts';

const GENERATOR = 'bench/generate-synthetic.ts';

const SYNTHETIC_FILES = ['organizations.csv', 'organization_tags.csv'] as const;

interface Marker {
  organizations: number;
  seed: number;
  nameSuffix: string;
  files: Record<string, number>;
  generationSeconds: number;
  generatedAt: string;
}

/**
 * The cached synthetic dataset, generated first when missing or incomplete. A name suffix makes a
 * second edition: the same organizations, each name ending in it.
 */
export async function syntheticDataset(
  organizations: number,
  seed: number,
  nameSuffix = '',
): Promise<{ directory: string; cached: boolean; generationSeconds: number | null }> {
  const edition = nameSuffix === '' ? '' : `-${createHash('sha256').update(nameSuffix).digest('hex').slice(0, 8)}`;
  const name = `synthetic-${organizations}-${seed}${edition}`;
  const directory = join(CACHE_DIR, name);
  // The marker lives beside the directory (not in it), so the importer only sees the dataset files.
  const markerFile = join(CACHE_DIR, `${name}.complete`);
  if (existsSync(markerFile) && existsSync(directory)) {
    try {
      const marker = JSON.parse(readFileSync(markerFile, 'utf8')) as Marker;
      const intact = SYNTHETIC_FILES.every((file) => {
        const path = join(directory, file);
        return existsSync(path) && statSync(path).size === marker.files[file];
      });
      if (intact) {
        log(`Using the cached synthetic dataset ${relative(REPO, directory)}.`);
        return { directory, cached: true, generationSeconds: null };
      }
    } catch {
      // unreadable marker: generate again
    }
  }
  rmSync(markerFile, { force: true });
  rmSync(directory, { recursive: true, force: true });
  const partial = `${directory}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(CACHE_DIR, { recursive: true });
  log(`Generating the synthetic dataset (${organizations.toLocaleString('en-US')} organizations, seed ${seed}) into ${relative(REPO, directory)} ...`);
  const run = await runNode([GENERATOR, '--organizations', String(organizations), '--seed', String(seed), '--name-suffix', nameSuffix, '--out', partial]);
  if (run.exitCode !== 0) throw new Error(`${GENERATOR} failed (exit ${run.exitCode ?? run.signal})`);
  renameSync(partial, directory);
  const marker: Marker = {
    organizations,
    seed,
    nameSuffix,
    files: Object.fromEntries(SYNTHETIC_FILES.map((file) => [file, statSync(join(directory, file)).size])),
    generationSeconds: run.wallSeconds,
    generatedAt: new Date().toISOString(),
  };
  writeFileSync(markerFile, `${JSON.stringify(marker, null, 2)}\n`);
  return { directory, cached: false, generationSeconds: run.wallSeconds };
}
