import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('runtime dependencies', () => {
  it('are each listed, with a reason, in docs/dependencies.md', () => {
    const declared = Object.keys(JSON.parse(read('package.json')).dependencies).sort();
    const listed = [...read('docs/dependencies.md').matchAll(/^\| `([^`]+)` \| \S/gm)].map((match) => match[1]).sort();
    assert.deepEqual(listed, declared);
  });

  it('run no install script, any of them (direct or not)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }> };
    const runtime = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.dev !== true);
    assert.ok(runtime.length > 10, 'the lock file lists the runtime packages');
    assert.deepEqual(runtime.filter(([, entry]) => entry.hasInstallScript === true).map(([path]) => path), []);
  });
});
