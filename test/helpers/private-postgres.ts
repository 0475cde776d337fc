import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './wait.ts';

/**
 * A PostgreSQL server of a test's own (initdb in a temporary directory, on a free port), for tests
 * that stop and start it: the shared server is never disturbed. Uses the binaries of the installed
 * PostgreSQL; as root, runs them as the postgres user (initdb refuses root).
 */
export interface PrivateCluster {
  url: string;
  /** A hot standby of this server, streaming from it (pg_basebackup -R). */
  replica(): Promise<PrivateCluster>;
  start(): void;
  stop(): void;
  destroy(): void;
}

function binaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return version === undefined ? undefined : join(root, version, 'bin');
}

export const privateClusterAvailable = (): boolean => binaries() !== undefined;


export async function privateCluster(primaryUrl?: string): Promise<PrivateCluster> {
  const bin = binaries();
  if (bin === undefined) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const directory = mkdtempSync(join(tmpdir(), 'hsds-org-api-pg-'));
  const data = join(directory, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = execFileSync('id', ['-u', 'postgres']).toString().trim();
    const group = execFileSync('id', ['-g', 'postgres']).toString().trim();
    chownSync(directory, Number(ids), Number(group));
  }
  const run = (command: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(bin, command), asRoot ? ['-u', 'postgres', '--', join(bin, command), ...args] : args, { stdio: 'pipe', timeout: 60_000 });
  const port = await freePort();
  if (primaryUrl === undefined) {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions']);
  } else {
    const primary = new URL(primaryUrl);
    run('pg_basebackup', ['-h', primary.hostname, '-p', primary.port, '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--no-sync']);
  }
  const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(directory, 'log'), '-w', '-t', '30', 'start']);
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    replica: () => privateCluster(url),
    start,
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    destroy: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
