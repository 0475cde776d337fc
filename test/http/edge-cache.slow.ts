import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/http/app.ts';
import { LiveSqliteStores } from '../../src/store/sqlite/live.ts';
import { API, temporaryDirectory } from '../helpers/app.ts';
import { NATIVE_EXAMPLE, nativeSourceDir, runCommand } from '../helpers/imports.ts';
import { freePort, waitFor } from '../helpers/wait.ts';

/**
 * The API behind a real edge cache: Debian's nginx with `proxy_cache`, configured as
 * docs/edge-caching.md tells operators. .ci/run installs nginx; elsewhere the test is skipped
 * without it.
 */
const NGINX = '/usr/sbin/nginx';
const nginxMissing = !existsSync(NGINX);
const inCi = process.env.CI === 'true';
/** Seconds: short, so that an entry expires within the test. Errors are kept a fifth of it. */
const MAX_AGE = 5;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function fetchVia(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('latin1') }));
    }).on('error', reject);
  });
}

/** The operators' configuration of docs/edge-caching.md, around this test's ports and directory. */
function edgeConfig(directory: string, port: number, origin: number): string {
  return `daemon off;
master_process off;
${process.getuid?.() === 0 ? 'user root;' : ''}
pid ${directory}/nginx.pid;
error_log ${directory}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${directory}/body;
  proxy_temp_path ${directory}/proxy;
  proxy_cache_path ${directory}/cache keys_zone=hsds:10m max_size=1g inactive=1h;
  upstream hsds { server 127.0.0.1:${origin}; keepalive 16; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://hsds;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_cache hsds;
      proxy_cache_revalidate on;
      proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504;
      proxy_cache_background_update on;
      proxy_cache_lock on;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`;
}

/** Requests per status the origin answered for a route, from its /metrics. */
async function originCount(originPort: number, route: string, status: number): Promise<number> {
  const metrics = (await fetchVia(originPort, '/metrics')).body;
  const line = metrics.split('\n').find((text) => text.startsWith('hsds_http_requests_total{') && text.includes(`route="${route}"`) && text.includes(`status="${status}"`));
  return Number(line?.split(' ').at(-1) ?? 0);
}

/** The dataset version an ETag names (see http-caching.ts: "<version>.<representation tag>[-coding]"). */
const versionOf = (etag: unknown): string => String(etag).replace(/^W\//, '').slice(1).split('.')[0]!;

describe('behind an edge cache (nginx proxy_cache)', () => {
  it(
    'is served from the edge, revalidated with 304s, kept apart per coding, errors kept briefly, and a walk across a publish can tell',
    { skip: nginxMissing && !inCi ? `${NGINX} not found (apt-get install nginx)` : false, timeout: 60_000 },
    async () => {
      assert.ok(!nginxMissing, `${NGINX} not found: the edge cache test needs Debian's nginx (apt-get install -y nginx; .ci/run installs it)`);
      const data = temporaryDirectory();
      const edgeDirectory = temporaryDirectory();
      const scratch = temporaryDirectory();
      let edge: ChildProcess | undefined;
      assert.equal((await runCommand('import', data.path, [NATIVE_EXAMPLE])).code, 0);
      const stores = await LiveSqliteStores.open(data.path, { info: () => {}, error: () => {} });
      const app = await buildApp({ stores, logLevel: 'silent', cacheMaxAge: MAX_AGE });
      try {
        await app.listen({ host: '127.0.0.1', port: 0 });
        const originPort = (app.server.address() as { port: number }).port;
        const port = await freePort();
        for (const part of ['body', 'proxy', 'cache']) mkdirSync(join(edgeDirectory.path, part));
        writeFileSync(join(edgeDirectory.path, 'nginx.conf'), edgeConfig(edgeDirectory.path, port, originPort));
        edge = spawn(NGINX, ['-p', edgeDirectory.path, '-c', join(edgeDirectory.path, 'nginx.conf')], { stdio: 'ignore' });
        await waitFor(async () => (await fetchVia(port, '/healthz').catch(() => undefined)) !== undefined, 10_000, 'nginx');

        const route = `${API}/organizations`;
        const page = `${API}/organizations?per_page=2&page=1`;
        const br = { 'accept-encoding': 'br' };
        const gzip = { 'accept-encoding': 'gzip' };

        // Repeated requests are served by the edge.
        const first = await fetchVia(port, page, br);
        assert.deepEqual([first.status, first.headers['x-cache-status'], first.headers['content-encoding']], [200, 'MISS', 'br']);
        const again = await fetchVia(port, page, br);
        assert.deepEqual([again.status, again.headers['x-cache-status']], [200, 'HIT']);
        assert.equal(again.body, first.body);
        assert.equal(await originCount(originPort, route, 200), 1, 'the origin answered once');

        // Vary keeps the codings apart.
        const gzipped = await fetchVia(port, page, gzip);
        assert.deepEqual([gzipped.headers['x-cache-status'], gzipped.headers['content-encoding']], ['MISS', 'gzip']);
        assert.equal((await fetchVia(port, page, gzip)).headers['content-encoding'], 'gzip');
        assert.equal((await fetchVia(port, page, br)).headers['content-encoding'], 'br');

        // An error is kept a fifth as long as a page: a mistyped URL is not remembered long.
        const missing = `${API}/organizations/not-there`;
        assert.equal((await fetchVia(port, missing)).headers['x-cache-status'], 'MISS');
        assert.equal((await fetchVia(port, missing)).headers['x-cache-status'], 'HIT');
        // nginx counts time in whole seconds: one more covers the rounding.
        await sleep((MAX_AGE / 5 + 1) * 1000);
        assert.notEqual((await fetchVia(port, missing)).headers['x-cache-status'], 'HIT', 'a 404 kept past its max-age');

        // An expired entry is sent at once (stale, as the configuration allows) and revalidated in
        // the background with the origin's 304; the next request is a hit again, with the same body.
        await sleep(MAX_AGE * 1000);
        const expired = await fetchVia(port, page, br);
        assert.equal(expired.status, 200);
        assert.ok(['STALE', 'REVALIDATED'].includes(String(expired.headers['x-cache-status'])), String(expired.headers['x-cache-status']));
        await waitFor(async () => (await originCount(originPort, route, 304)) === 1, 5000, 'the edge to revalidate with a 304');
        const refreshed = await fetchVia(port, page, br);
        assert.deepEqual([refreshed.headers['x-cache-status'], refreshed.body], ['HIT', first.body]);
        assert.equal(await originCount(originPort, route, 200), 2, 'one 200 per coding, no more');

        // A client walking pages across a publish gets pages of two versions, and their ETags say so.
        const before = versionOf(first.headers.etag);
        const organizations = `${NATIVE_EXAMPLE}/organizations.csv`;
        const changed = `${readFileSync(organizations, 'utf8')}NEW-1,A New Organization,published,,,,,,,,,,\n`;
        assert.equal((await runCommand('import', data.path, [nativeSourceDir(join(scratch.path, 'source'), { 'organizations.csv': changed })])).code, 0);
        await stores.refresh();
        const pageOne = await fetchVia(port, page, br);
        const pageTwo = await fetchVia(port, `${API}/organizations?per_page=2&page=2`, br);
        assert.equal(pageOne.headers['x-cache-status'], 'HIT', 'page 1 still from the edge, of the old version');
        assert.equal(versionOf(pageOne.headers.etag), before);
        assert.notEqual(versionOf(pageTwo.headers.etag), before, 'page 2 is of the new version, and its ETag says so');
        const live = (JSON.parse((await fetchVia(originPort, `${API}/`)).body) as { dataset: { version: string } }).dataset.version;
        assert.equal(versionOf(pageTwo.headers.etag), live, 'the version the root names');
      } finally {
        edge?.kill();
        await app.close();
        data.remove();
        edgeDirectory.remove();
        scratch.remove();
      }
    },
  );
});
