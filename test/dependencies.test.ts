import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import semver from 'semver';

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

  it('all accept the oldest Node.js that package.json promises, so npm install warns of no engine (dev ones too)', () => {
    const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
    const oldest = semver.minVersion(manifest.engines.node);
    assert.ok(oldest !== null);
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } }> };
    const declaring = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && typeof entry.engines?.node === 'string');
    assert.ok(declaring.length > 10, 'the lock file records the packages\' engines');
    const refusing = declaring
      .filter(([, entry]) => !semver.satisfies(oldest, entry.engines!.node!, { includePrerelease: true }))
      .map(([path, entry]) => `${path} wants node ${entry.engines!.node}`);
    assert.deepEqual(refusing, []);
  });
});
