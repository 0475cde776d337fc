import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { runImport } from '../../src/cli/import.ts';
import { buildApp } from '../../src/http/app.ts';
import { LiveSqliteStores } from '../../src/store/sqlite/live.ts';
import { DEFAULT_HARVEST } from '../../src/config.ts';
import type { ImportConfig } from '../../src/config.ts';
import { temporaryDirectory } from './app.ts';
import { checkEveryResponse } from './hsds-schemas.ts';

export const NATIVE_EXAMPLE = new URL('../../docs/examples/native/', import.meta.url).pathname.replace(/\/$/, '');

export interface ImportRun {
  code: number;
  /** Every line printed, in order: diagnostics (stderr) and the verdict (stdout). */
  output: string[];
  text: string;
  /** The lines printed as the result (stdout): the verdict. */
  results: string[];
}

/** Runs the `import` (or `validate`) command in-process, capturing what it prints. */
export async function runCommand(command: 'import' | 'validate', dataDir: string, sources: string[], options: Partial<ImportConfig> = {}): Promise<ImportRun> {
  const output: string[] = [];
  const results: string[] = [];
  const config = { dataDir, sources, maxErrors: 50, strict: false, progress: 'none' as const, database: undefined, harvest: DEFAULT_HARVEST, ...options };
  const code = await runImport(command, config, (line) => output.push(line), (line) => {
    output.push(line);
    results.push(line);
  });
  return { code, output, text: output.join('\n'), results };
}

/** Copies the native example into `directory`, then overwrites or adds the given files (name → content). */
export function nativeSourceDir(directory: string, files: Record<string, string | Buffer> = {}): string {
  mkdirSync(directory, { recursive: true });
  cpSync(NATIVE_EXAMPLE, directory, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(directory, name), content);
  return directory;
}

/** An app serving whatever is published in `dataDir`, following new publishes. */
export async function serveDataDir(dataDir: string): Promise<{ app: FastifyInstance; stores: LiveSqliteStores }> {
  const quiet = { info: () => {}, error: () => {} };
  const stores = await LiveSqliteStores.open(dataDir, quiet);
  const app = await buildApp({ stores, logLevel: 'silent' });
  await app.ready();
  return { app, stores };
}

/**
 * Writes the files (path in the source folder → content) to a new source folder, imports it into a
 * new data directory (exit 0 expected), and runs `check` on an app serving it; every JSON it answers
 * must be valid HSDS. Both folders are removed afterwards.
 */
export async function importAndServe(files: Record<string, string | Buffer>, check: (app: FastifyInstance, run: ImportRun) => Promise<void>): Promise<void> {
  const source = temporaryDirectory();
  const data = temporaryDirectory();
  try {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(dirname(join(source.path, name)), { recursive: true });
      writeFileSync(join(source.path, name), content);
    }
    const run = await runCommand('import', data.path, [source.path]);
    assert.equal(run.code, 0, run.text);
    const { app } = await serveDataDir(data.path);
    const invalid = checkEveryResponse(app);
    try {
      await check(app, run);
      assert.deepEqual(invalid, []);
    } finally {
      await app.close();
    }
  } finally {
    source.remove();
    data.remove();
  }
}
