import { existsSync } from 'node:fs';
import closeWithGrace from 'close-with-grace';
import { ConfigError, configHelp, loadConfig } from './config.ts';
import type { Config } from './config.ts';
import { buildApp } from './http/app.ts';
import { buildSnapshot } from './publish/build.ts';
import { loadDefaultDataset } from './publish/default-dataset.ts';
import { progressReporter } from './publish/progress.ts';
import { SqliteStore } from './store/sqlite.ts';

const USAGE = `Usage: hsds-org-api <command> [options]

Commands:
  serve    Serve the API (builds the default dataset from data/ first when the database is missing)

Options (flag, environment variable):
${configHelp()}
  --help`;

const log = (line: string) => process.stderr.write(`${line}\n`);

async function buildDefaultDataset(config: Config): Promise<void> {
  log(`No dataset at ${config.databasePath}: building it from data/ (once).`);
  const { input, report } = await loadDefaultDataset();
  const started = performance.now();
  const progress = { read: progressReporter('reading organizations', log), write: progressReporter('rendering and writing', log) };
  const result = await buildSnapshot(input, config.databasePath, { onProgress: (stage, rows) => progress[stage].update(rows) });
  const unknown = [...report.unknownNteeCodes.values()].reduce((sum, count) => sum + count, 0);
  log(
    `Built dataset ${result.version} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${result.organizations} organizations, ${result.taxonomies} taxonomies, ` +
      `${result.taxonomyTerms} terms. ${unknown} organizations have an NTEE code not in the NTEE list ` +
      `(${report.unknownNteeCodes.size} distinct codes); they are served without an NTEE tag.`,
  );
}

async function serve(config: Config): Promise<void> {
  if (!existsSync(config.databasePath)) await buildDefaultDataset(config);
  const store = new SqliteStore(config.databasePath);
  const app = await buildApp({ store, publicBaseUrl: config.publicBaseUrl, trustProxy: config.trustProxy, logLevel: config.logLevel });
  closeWithGrace({ delay: 10_000 }, async ({ err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    await app.close();
  });
  await app.listen({ port: config.port, host: config.host });
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === 'help' || rest.includes('--help')) {
    log(USAGE);
    return command === undefined ? 1 : 0;
  }
  if (command !== 'serve') {
    log(`Unknown command "${command}".\n\n${USAGE}`);
    return 1;
  }
  await serve(loadConfig(rest));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    log(error instanceof ConfigError || error instanceof TypeError ? `Error: ${(error as Error).message}` : String((error as Error).stack ?? error));
    process.exitCode = 1;
  },
);
