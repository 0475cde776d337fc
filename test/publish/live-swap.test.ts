import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { temporaryDirectory } from '../helpers/app.ts';
import { nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

/** A native dataset whose every organization name starts with `label`, so a response shows which dataset it came from. */
function datasetNamed(directory: string, label: string, count: number): string {
  const rows = Array.from({ length: count }, (_, index) => `${label}-${String(index).padStart(3, '0')},${label} Organization ${index},published,,,,,,,,,,`);
  const tags = Array.from({ length: count }, (_, index) => `${label}-${String(index).padStart(3, '0')},city_services,${index % 2 === 0 ? 'food' : 'housing'}`);
  return nativeSourceDir(directory, {
    'organizations.csv': `id,name,status,alternate_name,description,email,website,tax_status,tax_id,year_incorporated,legal_status,uri,parent_id\n${rows.join('\n')}\n`,
    'organization_tags.csv': `organization_id,taxonomy,term_code\n${tags.join('\n')}\n`,
    'organization_identifiers.csv': 'organization_id,scheme,type,identifier\n',
  });
}

const COUNTS: Record<string, number> = { Alpha: 30, Bravo: 45 };

/** Which dataset a response body came from; fails if it mixes the two. */
function datasetOf(path: string, body: any): string {
  if (path.endsWith('/api/hsds/v3/')) {
    const label = body.dataset.organizations === COUNTS.Alpha ? 'Alpha' : 'Bravo';
    assert.equal(body.dataset.organizations, COUNTS[label]);
    return `${label}:${body.dataset.version}`;
  }
  const labels = new Set<string>(body.contents.map((item: any) => item.name.split(' ')[0]));
  assert.equal(labels.size, 1, `one page mixes datasets: ${[...labels].join(', ')}`);
  const [label] = labels as unknown as string[];
  assert.equal(body.total_items, COUNTS[label!], `${path}: total_items of ${label}`);
  return label!;
}

describe('publishing while the server answers requests', () => {
  it('switches without an error, a dropped request or a response mixing versions', { timeout: 60_000 }, async () => {
    const data = temporaryDirectory();
    const alpha = temporaryDirectory();
    const bravo = temporaryDirectory();
    const { app } = await (async () => {
      assert.equal((await runCommand('import', data.path, [datasetNamed(alpha.path, 'Alpha', COUNTS.Alpha!)])).code, 0);
      return serveDataDir(data.path);
    })();
    try {
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      const paths = ['/api/hsds/v3/', '/api/hsds/v3/organizations?per_page=100', '/api/hsds/v3/organizations?page=2&per_page=7'];
      const seen = new Map<string, number>();
      let failures: string[] = [];
      let requests = 0;
      let stop = false;
      // Called with each new count of a dataset's answers; `answered` resolves once it reaches a number.
      const reached = new Map<string, (count: number) => void>();
      const answered = (label: string, count: number) =>
        new Promise<void>((resolve) => {
          if ((seen.get(label) ?? 0) >= count) return resolve();
          reached.set(label, (now) => now >= count && resolve());
        });
      const client = async (offset: number) => {
        for (let index = offset; !stop; index++) {
          const path = paths[index % paths.length]!;
          try {
            const response = await fetch(`${address}${path}`);
            const body = await response.json();
            if (response.status !== 200) throw new Error(`status ${response.status}`);
            const label = datasetOf(path, body).split(':')[0]!;
            seen.set(label, (seen.get(label) ?? 0) + 1);
            reached.get(label)?.(seen.get(label)!);
          } catch (error) {
            failures.push(`${path}: ${(error as Error).message}`);
          }
          requests++;
        }
      };
      const clients = [0, 1, 2, 3].map(client);
      // The old dataset answers some requests before the import starts.
      await answered('Alpha', 11);
      const importer = spawn(process.execPath, [CLI, 'import', '--progress', 'none', '--data-dir', data.path, datasetNamed(bravo.path, 'Bravo', COUNTS.Bravo!)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      importer.stderr.on('data', (chunk) => (stderr += chunk));
      const exitCode = await new Promise<number | null>((resolve) => importer.on('exit', resolve));
      assert.equal(exitCode, 0, stderr);
      // Keep going until the new dataset has answered 50 more requests after the import's exit.
      await answered('Bravo', (seen.get('Bravo') ?? 0) + 50);
      stop = true;
      await Promise.all(clients);
      assert.deepEqual(failures, []);
      assert.ok((seen.get('Alpha') ?? 0) > 10, `requests answered from the old dataset: ${seen.get('Alpha')}`);
      assert.ok((seen.get('Bravo') ?? 0) >= 50, `requests answered from the new dataset: ${seen.get('Bravo')}`);
      assert.equal(requests, (seen.get('Alpha') ?? 0) + (seen.get('Bravo') ?? 0));
      failures = [];
    } finally {
      await app.close();
      for (const directory of [data, alpha, bravo]) directory.remove();
    }
  });
});

