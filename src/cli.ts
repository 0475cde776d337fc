import cluster from 'node:cluster';
import { runImport } from './cli/import.ts';
import { runServe } from './cli/serve.ts';
import { runMigrate } from './cli/migrate.ts';
import { runUse } from './cli/use.ts';
import { ConfigError, configHelp, loadImportConfig, loadMigrateConfig, loadServeConfig, loadUseConfig } from './config.ts';
import type { Command } from './config.ts';
import { escapeControlCharacters } from './publish/diagnostics.ts';
import { ImportBusy } from './publish/import-lock.ts';
import { storageFault } from './publish/storage-faults.ts';
import { NotMigrated } from './publish/publish-postgres.ts';

const COMMANDS: Record<Command, { usage: string; about: string }> = {
  serve: {
    usage: 'hsds-org-api serve [options]',
    about: 'Serve the API from the data directory (or PostgreSQL, given a database URL), switching to each newly published\ndataset without a restart. When nothing has been published yet, the default dataset in data/ is imported first.',
  },
  import: {
    usage: 'hsds-org-api import [options] <source...>',
    about: 'Read, check and publish sources as the new live dataset, atomically. On any error nothing is published.\nA source is a file or directory, optionally prefixed by its kind: native, hsds, irs, ntee, open-eligibility,\nntee-crosswalk (e.g. native:./my-data). See docs/data-format.md.',
  },
  validate: {
    usage: 'hsds-org-api validate [options] <source...>',
    about: 'The same checks as import, writing nothing. Exit code 0 when the sources are publishable.',
  },
  use: {
    usage: 'hsds-org-api use [options] <snapshot>',
    about: 'Make a published snapshot in the data directory the live one, after verifying its checksum: to recover when\nthe pointer is lost or the live snapshot damaged, or to roll back. A running server follows once it has verified the snapshot too.',
  },
  migrate: {
    usage: 'hsds-org-api migrate [options]',
    about: 'Apply the pending migrations to the PostgreSQL database (only for PostgreSQL; the SQLite store needs none).',
  },
};

const MAIN_USAGE = `Usage: hsds-org-api <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(9)} ${command.about.split('\n')[0]}`)
  .join('\n')}

Run hsds-org-api <command> --help for a command's options.`;

const commandHelp = (command: Command): string =>
  `Usage: ${COMMANDS[command].usage}\n\n${COMMANDS[command].about}\n\nOptions (flag, environment variable):\n${configHelp(command)}\n  --help`;

// What is printed, whatever it quotes (a file's ids, a pointer's content), has its control characters
// escaped; only the line breaks of our own multi-line texts (help) are kept.
const write = (text: string) => process.stderr.write(`${text.split('\n').map(escapeControlCharacters).join('\n')}\n`);

/** One line for what the system or the operator can fix; undefined for anything else (a bug keeps its stack). */
function knownFault(error: unknown): string | undefined {
  if (error instanceof ImportBusy || error instanceof NotMigrated) return error.message;
  return storageFault(error, '')?.message;
}

const isCommand = (value: string | undefined): value is Command => value !== undefined && Object.hasOwn(COMMANDS, value);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === 'help') {
    write(MAIN_USAGE);
    return command === undefined ? 2 : 0;
  }
  if (!isCommand(command)) {
    write(`Unknown command "${command}".\n\n${MAIN_USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    write(commandHelp(command));
    return 0;
  }
  const isTerminal = process.stderr.isTTY === true;
  if (command === 'serve') return runServe(loadServeConfig(rest, process.env, isTerminal), write);
  if (command === 'migrate') return runMigrate(loadMigrateConfig(rest, process.env), write);
  if (command === 'use') return runUse(loadUseConfig(rest, process.env), write);
  return runImport(command, loadImportConfig(command, rest, process.env, isTerminal), write);
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
  (error: unknown) => {
    if (error instanceof ConfigError || (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      write(`Error: ${error.message}\nRun with --help for usage.`);
      process.exitCode = 2;
      return;
    }
    write(`Error: ${knownFault(error) ?? String((error as Error).stack ?? error)}`);
    process.exitCode = 1;
  },
);
