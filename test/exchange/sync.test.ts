import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_HARVEST } from '../../src/config.ts';
import { runSync } from '../../src/exchange/sync.ts';
import type { LiveSqliteStores } from '../../src/store/sqlite/live.ts';
import { API, listenOnLoopback, temporaryDirectory } from '../helpers/app.ts';
import { servedAnswers } from '../helpers/round-trip.ts';
import { nativeSourceDir, runCommand, serveDataDir } from '../helpers/imports.ts';

/**
 * `sync <base URL>` against another instance on loopback: a first full copy, a copy in step after
 * organizations are changed, removed and added upstream, nothing to do when nothing changed, a 410
 * answered by a full copy, and a feed cut short that publishes nothing.
 */

describe('sync with another instance', () => {
  const upstreamData = temporaryDirectory();
  const upstreamSource = temporaryDirectory();
  const copy = temporaryDirectory();
  let upstream: { app: FastifyInstance; stores: LiveSqliteStores };
  let server: Awaited<ReturnType<typeof listenOnLoopback>>;
  /** What the next request to the upstream server gets instead of its answer, if set. */
  let intercept: ((request: IncomingMessage, response: ServerResponse) => boolean) | undefined;

  before(async () => {
    nativeSourceDir(upstreamSource.path);
    assert.equal((await runCommand('import', upstreamData.path, [upstreamSource.path])).code, 0);
    upstream = await serveDataDir(upstreamData.path);
    server = await listenOnLoopback((request, response) => {
      if (intercept?.(request, response) === true) return;
      upstream.app.routing(request, response);
    });
  });
  after(async () => {
    await server.close();
    await upstream.app.close();
    await upstream.stores.close();
    for (const folder of [upstreamData, upstreamSource, copy]) folder.remove();
  });

  async function sync(): Promise<{ code: number; text: string }> {
    const lines: string[] = [];
    const config = { dataDir: copy.path, databaseUrl: undefined, database: undefined, source: server.base, sources: [server.base], maxErrors: 50, strict: false, progress: 'none' as const, harvest: { ...DEFAULT_HARVEST, requestsPerSecond: 0, retryDelayMs: 10 } };
    const code = await runSync(config, (line) => lines.push(line), (line) => lines.push(line));
    return { code, text: lines.join('\n') };
  }

  async function assertInStep(): Promise<void> {
    const mine = await serveDataDir(copy.path);
    try {
      assert.deepEqual(await servedAnswers(mine.app), await servedAnswers(upstream.app));
    } finally {
      await mine.app.close();
      await mine.stores.close();
    }
  }

  /** Publishes upstream a new edition of its source files, edited by `edit`. */
  async function publishUpstream(edit: (organizations: string) => string): Promise<void> {
    const file = join(upstreamSource.path, 'organizations.csv');
    writeFileSync(file, edit(readFileSync(file, 'utf8')));
    const run = await runCommand('import', upstreamData.path, [upstreamSource.path]);
    assert.equal(run.code, 0, run.text);
    await upstream.stores.refresh();
  }

  it('copies everything the first time', async () => {
    const run = await sync();
    assert.equal(run.code, 0, run.text);
    assert.match(run.text, /applying a full copy of .* version [0-9a-f]{16}/);
    await assertInStep();
  });

  it('applies only what changed upstream (changed, removed, added), and is then in step', async () => {
    await publishUpstream((organizations) =>
      organizations
        .replace('Westside Pantry', 'Westside Community Pantry')
        .replace('SPR-004,Harbor Light Shelter,published', 'SPR-004,Harbor Light Shelter,unpublished')
        .concat('SPR-099,Riverside Tenants Union,published,,"Helps tenants with repairs and leases.",,,,,,,,\n'),
    );
    const run = await sync();
    assert.equal(run.code, 0, run.text);
    assert.match(run.text, /changes from [0-9a-f]{16} to [0-9a-f]{16}: 2 organizations added or changed, 1 organization removed/);
    await assertInStep();
  });

  it('publishes nothing when nothing changed upstream', async () => {
    const run = await sync();
    assert.equal(run.code, 0, run.text);
    assert.match(run.text, /^Unchanged: the copy holds .* version [0-9a-f]{16} already\.$/m);
  });

  it('makes a full copy by itself when the version it holds is no longer kept upstream (410)', async () => {
    await publishUpstream((organizations) => organizations.replace('Westside Community Pantry', 'Westside Pantry and Kitchen'));
    intercept = (request, response) => {
      if (!/\/changes\?since=(?!0\b)/.test(request.url!)) return false;
      response.writeHead(410, { 'content-type': 'application/problem+json' }).end('{"status":410}');
      return true;
    };
    try {
      const run = await sync();
      assert.equal(run.code, 0, run.text);
      assert.match(run.text, /no longer keeps the changes since [0-9a-f]{16} \(410\): a full copy/);
    } finally {
      intercept = undefined;
    }
    await assertInStep();
  });

  it('publishes nothing when the feed is cut short, and the next sync puts it right', async () => {
    await publishUpstream((organizations) => organizations.replace('Westside Pantry and Kitchen', 'Westside Pantry'));
    const before = await serveDataDir(copy.path);
    const versionBefore = JSON.parse((await before.app.inject({ url: `${API}/` })).body).dataset.version;
    await before.app.close();
    await before.stores.close();
    intercept = (request, response) => {
      if (!request.url!.includes('/changes?since=')) return false;
      void upstream.app.inject({ url: request.url! }).then((answer) => {
        const lines = answer.body.split('\n').filter((line) => line !== '');
        response.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(`${lines.slice(0, -1).join('\n')}\n`);
      });
      return true;
    };
    try {
      const run = await sync();
      assert.equal(run.code, 1, run.text);
      assert.match(run.text, /the feed was cut short after line \d+: it has no end line/);
      assert.match(run.text, /Not synced: nothing was published/);
    } finally {
      intercept = undefined;
    }
    const after = await serveDataDir(copy.path);
    assert.equal(JSON.parse((await after.app.inject({ url: `${API}/` })).body).dataset.version, versionBefore);
    await after.app.close();
    await after.stores.close();
    const run = await sync();
    assert.equal(run.code, 0, run.text);
    await assertInStep();
  });
});
