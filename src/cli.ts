import cluster from 'node:cluster';
import packageJson from '../package.json' with { type: 'json' };
import { twoColumns, wrap } from './cli/help.ts';
import type { HelpRow } from './cli/help.ts';
import { ConfigError, configHelp, loadExportConfig, loadImportConfig, loadMigrateConfig, loadServeConfig, loadSyncConfig, loadUseConfig } from './config.ts';
import type { Command } from './config.ts';
import { escapeControlCharacters } from './sources/files/diagnostics.ts';

const COMMANDS: Record<Command, { usage: string; summary: string; details: string }> = {
  serve: {
    usage: 'hsds-org-api serve [options]',
    summary: 'Serve the API from the data directory, or from PostgreSQL given a database URL.',
    details: 'It switches to each newly published dataset without a restart. When nothing has been published yet, the default dataset in data/ is imported first.',
  },
  import: {
    usage: 'hsds-org-api import [options] <source...>',
    summary: 'Read, check and publish sources as the new live dataset, atomically.',
    details:
      'On any error nothing is published. A source is a file or directory, optionally prefixed by its kind: native, hsds, irs, ntee, open-eligibility, ntee-crosswalk (e.g. native:./my-data); or the base URL of an HSDS 3.x API (https://example.org/api/hsds/v3), read page by page. See docs/data-format.md and docs/exchange.md.',
  },
  validate: {
    usage: 'hsds-org-api validate [options] <source...>',
    summary: 'The same checks as import, writing nothing.',
    details: 'Exit code 0 when the sources are publishable.',
  },
  use: {
    usage: 'hsds-org-api use [options] <snapshot>',
    summary: 'Make a snapshot of the data directory the live one, after verifying its checksum.',
    details:
      'Use it to recover when the pointer is lost or the live snapshot damaged, or to roll back. A running server follows once it has verified the snapshot too.',
  },
  export: {
    usage: 'hsds-org-api export [options] <folder>',
    summary: 'Write the live dataset as an HSDS tabular package (CSV files and datapackage.json) into a new or empty folder.',
    details: 'The same package the API serves at /api/hsds/v3/datapackage.zip; import reads it back. See docs/exchange.md.',
  },
  sync: {
    usage: 'hsds-org-api sync [options] <base URL of another instance>',
    summary: 'Keep the dataset published here a copy of another instance\'s, through its changes feed.',
    details: 'The first run copies everything; each later run applies the changes since the version it copied last, and publishes as import does (checked, atomic). A 410 falls back to a full copy. See docs/exchange.md.',
  },
  migrate: {
    usage: 'hsds-org-api migrate [options]',
    summary: 'Apply the pending migrations to the PostgreSQL database.',
    details: 'Only for PostgreSQL; the SQLite store needs none.',
  },
};

const HELP_FLAGS = ['--help', '-h'];
const VERSION_FLAGS = ['--version', '-v'];
const GENERAL_OPTIONS: HelpRow[] = [
  { term: ['-h, --help'], description: 'print this help and exit' },
  { term: ['-v, --version'], description: 'print the version and exit' },
];

const MAIN_USAGE = `Usage: hsds-org-api <command> [options]

Commands:
${twoColumns(Object.entries(COMMANDS).map(([name, command]) => ({ term: [name], description: command.summary })))}

Options:
${twoColumns(GENERAL_OPTIONS)}

Run hsds-org-api <command> --help for a command's options.`;

const commandHelp = (command: Command): string =>
  [
    `Usage: ${COMMANDS[command].usage}`,
    '',
    ...wrap(`${COMMANDS[command].summary} ${COMMANDS[command].details}`),
    '',
    'Options (flag, then its environment variable):',
    twoColumns([...configHelp(command), ...GENERAL_OPTIONS]),
  ].join('\n');

// What is printed, whatever it quotes (a file's ids, a pointer's content), has its control characters
// escaped; only the line breaks of our own multi-line texts (help) are kept.
const printTo = (stream: NodeJS.WriteStream) => (text: string) => stream.write(`${text.split('\n').map(escapeControlCharacters).join('\n')}\n`);
/** Progress, warnings and errors: for the person watching, whatever the result is piped to. */
const write = printTo(process.stderr);
/** What the command was asked for: a verdict, a summary of what was done, the help, the version. */
const writeResult = printTo(process.stdout);

/** One line for what the system or the operator can fix; undefined for anything else (a bug keeps its stack). */
async function knownFault(error: unknown): Promise<string | undefined> {
  const [{ ImportBusy }, { NotMigrated }, { storageFault }] = await Promise.all([
    import('./publish/import-lock.ts'),
    import('./publish/publish-postgres.ts'),
    import('./publish/storage-faults.ts'),
  ]);
  if (error instanceof ImportBusy || error instanceof NotMigrated) return error.message;
  return storageFault(error, '')?.message;
}

const isCommand = (value: string | undefined): value is Command => value !== undefined && Object.hasOwn(COMMANDS, value);

/** The arguments that may be options: those before a `--` (after it, all are sources). */
const optionsPart = (args: string[]): string[] => (args.includes('--') ? args.slice(0, args.indexOf('--')) : args);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const asked = optionsPart(argv);
  if (asked.some((arg) => VERSION_FLAGS.includes(arg))) {
    writeResult(packageJson.version);
    return 0;
  }
  if (command === undefined) {
    write(MAIN_USAGE);
    return 2;
  }
  if (command === 'help' || HELP_FLAGS.includes(command)) {
    writeResult(MAIN_USAGE);
    return 0;
  }
  if (!isCommand(command)) {
    write(`Unknown command "${command}".\n\n${MAIN_USAGE}`);
    return 2;
  }
  if (asked.some((arg) => HELP_FLAGS.includes(arg))) {
    writeResult(commandHelp(command));
    return 0;
  }
  const isTerminal = process.stderr.isTTY === true;
  // Each command's code is loaded when it runs: --help and --version answer without it.
  if (command === 'serve') return (await import('./cli/serve.ts')).runServe(loadServeConfig(rest, process.env, isTerminal), write);
  if (command === 'migrate') return (await import('./cli/migrate.ts')).runMigrate(loadMigrateConfig(rest, process.env), writeResult);
  if (command === 'use') return (await import('./cli/use.ts')).runUse(loadUseConfig(rest, process.env), write, writeResult);
  if (command === 'sync') return (await import('./exchange/sync.ts')).runSync(loadSyncConfig(rest, process.env, isTerminal), write, writeResult);
  if (command === 'export') return (await import('./cli/export.ts')).runExport(loadExportConfig(rest, process.env), write, writeResult);
  return (await import('./cli/import.ts')).runImport(command, loadImportConfig(command, rest, process.env, isTerminal), write, writeResult);
}

// Started by bin/hsds-org-api.js (or another process's fork): when that process is gone, stop as if
// it had passed on SIGTERM. Not in a serve worker, whose channel is node:cluster's.
if (process.channel !== undefined && !cluster.isWorker) {
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  async (error: unknown) => {
    if (error instanceof ConfigError || (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      write(`Error: ${error.message}\nRun with --help for usage.`);
      process.exitCode = 2;
      return;
    }
    write(`Error: ${(await knownFault(error)) ?? String((error as Error).stack ?? error)}`);
    process.exitCode = 1;
  },
);
