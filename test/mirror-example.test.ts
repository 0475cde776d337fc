import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { organizationId } from '../src/hsds/ids.ts';
import type { DatasetInput } from '../src/hsds/records.ts';
import { buildApp } from '../src/http/app.ts';
import { publishDataset } from '../src/publish/publish.ts';
import { publishToPostgres } from '../src/publish/publish-postgres.ts';
import { LiveSqliteStores } from '../src/store/sqlite/live.ts';
import { PostgresStores } from '../src/store/postgres/live.ts';
import type { StoreProvider } from '../src/store/store.ts';
import { fixtureDataset, publishedOrganizations, terms, unpublishedOrganizations } from './fixtures/dataset.ts';
import { temporaryDirectory } from './helpers/app.ts';
import { assertHsds } from './helpers/hsds-schemas.ts';
import { postgresSuite, quietLog, temporaryDatabase, testSettings } from './helpers/postgres.ts';
import { waitFor } from './helpers/wait.ts';

const MIRROR = new URL('../examples/mirror.mjs', import.meta.url).pathname;
const API = '/api/hsds/v3';

function runMirror(apiRoot: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MIRROR, apiRoot, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The mirror's tables, each as id → parsed document, and the version it holds. */
function readMirror(file: string) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const table = (name: string) => new Map((db.prepare(`SELECT id, json FROM ${name}`).all() as { id: string; json: string }[]).map((row) => [row.id, JSON.parse(row.json)]));
    const version = (db.prepare('SELECT version FROM mirror').get() as { version: string } | undefined)?.version;
    return { version, organizations: table('organizations'), taxonomies: table('taxonomies'), taxonomy_terms: table('taxonomy_terms') };
  } finally {
    db.close();
  }
}

async function served(address: string, path: string): Promise<Map<string, unknown>> {
  const text = await (await fetch(`${address}${API}${path}`)).text();
  const items = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id: string });
  return new Map(items.map((item) => [item.id, item]));
}

/** The mirror holds exactly what the server serves: every organization in full, every taxonomy and term, and the version. */
async function assertMirrors(address: string, file: string): Promise<void> {
  const mirror = readMirror(file);
  const root = (await (await fetch(`${address}${API}/`)).json()) as { dataset: { version: string } };
  assert.equal(mirror.version, root.dataset.version);
  assert.deepEqual(mirror.organizations, await served(address, '/organizations?format=ndjson&full=true'));
  assert.deepEqual(mirror.taxonomies, await served(address, '/taxonomies?format=ndjson'));
  assert.deepEqual(mirror.taxonomy_terms, await served(address, '/taxonomy_terms?format=ndjson'));
  for (const organization of mirror.organizations.values()) assertHsds('organization', organization);
}

/** A publish after the first: one organization changed, one added, one removed, one unpublished. */
function secondDataset(): DatasetInput {
  const organizations = publishedOrganizations
    .filter((organization) => organization.externalId !== 'NAT-010')
    .map((organization) => {
      if (organization.externalId === 'NAT-003') return { ...organization, description: 'Now also a dental clinic' };
      if (organization.externalId === 'NAT-008') return { ...organization, status: 'unpublished' as const };
      return organization;
    });
  const added = { ...publishedOrganizations[1]!, externalId: 'NAT-NEW', name: 'Brand New Shelter', additionalWebsites: undefined, tags: [{ taxonomy: 'Colors', code: 'red' }] };
  return fixtureDataset({ organizations: [...organizations, added, ...unpublishedOrganizations] });
}

/** Then: a new term (the taxonomies change), the new organization tagged with it, the removed one back. */
function thirdDataset(): DatasetInput {
  const second = secondDataset();
  const organizations = (second.organizations as typeof publishedOrganizations).map((organization) =>
    organization.externalId === 'NAT-NEW' ? { ...organization, tags: [{ taxonomy: 'Colors', code: 'white' }] } : organization,
  );
  return {
    ...second,
    terms: [...terms, { taxonomy: 'Colors', code: 'white', name: 'WHITE', description: 'The color white' }],
    organizations: [...organizations, publishedOrganizations[9]!],
  };
}

interface Backend {
  name: string;
  options: { skip?: string | boolean };
  /** Publishes and returns the version now live, and the provider the server reads (opened at the first publish). */
  start(): Promise<{ publish: (input: DatasetInput) => Promise<string>; stores: () => Promise<StoreProvider>; dispose: () => Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    name: 'SQLite',
    options: {},
    async start() {
      const data = temporaryDirectory();
      return {
        publish: async (input) => (await publishDataset(input, data.path)).version,
        stores: () => LiveSqliteStores.open(data.path, quietLog),
        dispose: async () => data.remove(),
      };
    },
  },
  {
    name: 'PostgreSQL',
    options: postgresSuite,
    async start() {
      const database = await temporaryDatabase();
      return {
        publish: async (input) => (await publishToPostgres(input, { url: database.url, migrate: true })).version,
        stores: () => PostgresStores.open(testSettings(database.url), quietLog),
        dispose: () => database.drop(),
      };
    },
  },
];

for (const backend of BACKENDS) {
  describe(`examples/mirror.mjs against a server on ${backend.name}`, backend.options, () => {
    it('copies the feed, then follows publishes that add, change, remove and unpublish organizations and change the taxonomies', async () => {
      const server = await backend.start();
      const work = temporaryDirectory();
      let app: FastifyInstance | undefined;
      let stores: StoreProvider | undefined;
      try {
        const first = await server.publish(fixtureDataset());
        stores = await server.stores();
        app = await buildApp({ stores, logLevel: 'silent' });
        const address = await app.listen({ port: 0, host: '127.0.0.1' });
        const apiRoot = `${address}${API}`;
        const mirror = join(work.path, 'mirror.sqlite');
        const live = async () => ((await (await fetch(`${apiRoot}/`)).json()) as { dataset: { version: string } }).dataset.version;
        const publishAndWait = async (input: DatasetInput) => {
          const version = await server.publish(input);
          await waitFor(async () => (await live()) === version, 10_000, `the server to serve ${version}`);
          return version;
        };

        const copy = await runMirror(apiRoot, mirror);
        assert.equal(copy.code, 0, copy.stderr);
        assert.match(copy.stdout, new RegExp(`^applied everything: ${publishedOrganizations.length} organizations added or changed, 0 removed, 2 taxonomies and 30 terms replaced; now at version ${first}\\n$`));
        await assertMirrors(address, mirror);

        const second = await publishAndWait(secondDataset());
        const update = await runMirror(apiRoot, mirror);
        assert.equal(update.code, 0, update.stderr);
        assert.equal(update.stdout, `applied the changes since ${first}: 2 organizations added or changed, 2 removed, taxonomies unchanged; now at version ${second}\n`);
        await assertMirrors(address, mirror);
        const held = readMirror(mirror).organizations;
        assert.ok(!held.has(organizationId('NAT-010')) && !held.has(organizationId('NAT-008')), 'removed and unpublished organizations are gone');

        const third = await publishAndWait(thirdDataset());
        const again = await runMirror(apiRoot, mirror);
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.stdout, `applied the changes since ${second}: 2 organizations added or changed, 0 removed, 2 taxonomies and 31 terms replaced; now at version ${third}\n`);
        await assertMirrors(address, mirror);

        const idle = await runMirror(apiRoot, mirror);
        assert.equal(idle.stdout, `applied the changes since ${third}: 0 organizations added or changed, 0 removed, taxonomies unchanged; now at version ${third}\n`);

        // A version the server does not keep: the script is told so (410) and copies everything.
        const db = new DatabaseSync(mirror);
        db.exec("UPDATE mirror SET version = '0000000000000000'; DELETE FROM organizations WHERE rowid % 2 = 0; INSERT INTO organizations VALUES ('stale', '{}')");
        db.close();
        const recopy = await runMirror(apiRoot, mirror);
        assert.equal(recopy.code, 0, recopy.stderr);
        assert.match(recopy.stderr, /0000000000000000 is too old for this server \(Version 0000000000000000 is not one whose changes this server keeps/);
        assert.match(recopy.stdout, /^applied everything: /);
        await assertMirrors(address, mirror);
      } finally {
        await app?.close();
        await stores?.close();
        await server.dispose();
        work.remove();
      }
    });
  });
}

describe('examples/mirror.mjs, given a feed cut short', () => {
  it('applies none of it and fails', async () => {
    const work = temporaryDirectory();
    const lines = [
      { type: 'changes', changes: { since: null, version: 'aaaaaaaaaaaaaaaa', published_at: '2026-01-01T00:00:00.000Z', taxonomies_changed: false, organizations_changed: 2, organizations_removed: 0 } },
      { type: 'organization', organization: { id: 'one', name: 'One' } },
    ];
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const run = await runMirror(`http://127.0.0.1:${(server.address() as AddressInfo).port}${API}`, join(work.path, 'mirror.sqlite'));
      assert.equal(run.code, 1);
      assert.match(run.stderr, /the feed was cut short \(no end line\); nothing applied/);
      const mirror = readMirror(join(work.path, 'mirror.sqlite'));
      assert.deepEqual([mirror.version, mirror.organizations.size], [undefined, 0]);
    } finally {
      server.close();
      work.remove();
    }
  });
});
