import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { FORWARDED_LINKS_WARNING } from '../../src/http/plugins/app/links.ts';
import { API, getJson, startTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

const forwarded = { host: 'internal:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example.org' };

describe('absolute links', () => {
  it('come from the request host by default, ignoring X-Forwarded-*', async () => {
    const test = await startTestApp();
    try {
      const { body, headers } = await getJson(test.app, `${API}/organizations?per_page=2`, forwarded);
      assert.equal(body.links.first, 'http://internal:8080/api/hsds/v3/organizations?per_page=2&page=1');
      assert.equal(headers.vary, 'Accept-Encoding', 'the Host is in every cache key already');
    } finally {
      await test.close();
    }
  });

  it('honour X-Forwarded-Proto and -Host from a trusted proxy, by address or by hop count, and say so in Vary', async () => {
    for (const trustProxy of [['127.0.0.1'], ['loopback', '10.0.0.0/8'], 1] as const) {
      const test = await startTestApp(undefined, { trustProxy });
      try {
        const { body, headers } = await getJson(test.app, `${API}/organizations?per_page=2`, forwarded);
        assert.equal(body.links.first, 'https://public.example.org/api/hsds/v3/organizations?per_page=2&page=1', String(trustProxy));
        assert.equal(headers.vary, 'X-Forwarded-Host, X-Forwarded-Proto, Accept-Encoding', String(trustProxy));
        // Every answer whose links could come from them says so, whatever sent it.
        const etag = String(headers.etag);
        for (const [url, extra] of [
          [`${API}/organizations?per_page=2`, {}],
          [`${API}/organizations?per_page=2`, { 'if-none-match': etag }],
          [`${API}/organizations/nope`, {}],
        ] as const) {
          const response = await test.app.inject({ url, headers: { ...forwarded, ...extra } });
          assert.match(String(response.headers.vary), /^X-Forwarded-Host, X-Forwarded-Proto/, `${url} ${response.statusCode}`);
        }
      } finally {
        await test.close();
      }
    }
  });

  it('ignore X-Forwarded-* from a peer that is not a trusted proxy', async () => {
    const byAddress = await startTestApp(undefined, { trustProxy: ['10.0.0.5'] });
    const byHops = await startTestApp(undefined, { trustProxy: 1 });
    try {
      const { body } = await getJson(byAddress.app, API, forwarded);
      assert.equal(body.links.self, 'http://internal:8080/api/hsds/v3');
      // A hop count believes only a nearest proxy on a private network: not a client reaching the server directly.
      const direct = await byHops.app.inject({ url: API, headers: forwarded, remoteAddress: '203.0.113.9' });
      assert.equal(JSON.parse(direct.body).links.self, 'http://internal:8080/api/hsds/v3');
    } finally {
      await byAddress.close();
      await byHops.close();
    }
  });

  it('come from the configured public base URL when set, whatever the request says', async () => {
    const test = await startTestApp(undefined, { publicBaseUrl: 'https://data.example.org/hsds', trustProxy: ['127.0.0.1'] });
    try {
      const { body, headers } = await getJson(test.app, `${API}/organizations?per_page=2`, forwarded);
      assert.equal(body.links.next, 'https://data.example.org/hsds/api/hsds/v3/organizations?per_page=2&page=2');
      assert.equal(headers.vary, 'Accept-Encoding', 'no request header chose the links');
      const root = await getJson(test.app, API, forwarded);
      assert.equal(root.body.openapi_url, 'https://data.example.org/hsds/api/hsds/v3/openapi.json');
      // The probe's case: a client's own X-Forwarded-Host passed on by the proxy.
      const [organization] = (await getJson(test.app, `${API}/organizations?per_page=1`)).body.contents;
      const redirect = await test.app.inject({
        url: `${API}/organizations/${organization.external_identifier}`,
        headers: { host: 'internal:8080', 'x-forwarded-host': 'evil.example' },
      });
      assert.equal(redirect.statusCode, 308);
      assert.equal(redirect.headers.location, `https://data.example.org/hsds/api/hsds/v3/organizations/${organization.id}`);
    } finally {
      await test.close();
    }
  });

  it('never echo a malformed Host or X-Forwarded-Proto', async () => {
    const test = await startTestApp(undefined, { trustProxy: ['127.0.0.1'] });
    try {
      for (const headers of [
        { host: 'evil.example/<script>' },
        { host: 'evil.example:99999' },
        { host: '[:]' },
        { host: 'user@evil.example' },
      ]) {
        const { body } = await getJson(test.app, API, headers);
        assert.equal(body.links.self, 'http://localhost/api/hsds/v3', headers.host);
        assertHsds('root', body);
      }
      const { body } = await getJson(test.app, API, { host: 'ok.example', 'x-forwarded-proto': 'javascript' });
      assert.equal(body.links.self, 'http://ok.example/api/hsds/v3');
    } finally {
      await test.close();
    }
  });

  it('use the canonical path, whatever spelling the request used', async () => {
    const test = await startTestApp();
    try {
      for (const path of [`${API}/%6frganizations?per_page=2`, `${API}/organizations/?per_page=2`]) {
        const { status, body } = await getJson(test.app, path, { host: 'api.example.org' });
        assert.equal(status, 200, path);
        assert.equal(body.links.next, 'http://api.example.org/api/hsds/v3/organizations?per_page=2&page=2');
      }
    } finally {
      await test.close();
    }
  });

  it('are given in a Link header too, on every list, the same URLs as the body\'s links, readable by scripts of other origins, from the cache as well', async () => {
    const test = await startTestApp(undefined, { responseCacheBytes: 2 ** 20 });
    try {
      for (const path of ['/organizations?per_page=2&page=2', '/organizations?search=shelter', '/taxonomies', '/taxonomy_terms?per_page=5&page=9', '/services']) {
        for (const round of ['made', 'kept']) {
          const response = await test.app.inject({ url: `${API}${path}`, headers: { origin: 'https://app.example.org' } });
          const { links } = JSON.parse(response.body) as { links: Record<string, string> };
          const header = String(response.headers.link);
          const parsed = Object.fromEntries(header.split(', ').map((part) => /^<([^>]*)>; rel="([a-z]+)"$/.exec(part)!.slice(1).reverse()));
          assert.deepEqual(parsed, links, `${path} (${round})`);
          assert.match(String(response.headers['access-control-expose-headers']), /\bLink\b/);
        }
      }
    } finally {
      await test.close();
    }
  });

  it('are announced at startup when they come from X-Forwarded-*, recommending PUBLIC_BASE_URL', () => {
    // The app's log lines at startup (warn and above), from a process of its own: the log goes to stdout.
    const startupWarnings = (options: string) => {
      const script = `
        const { buildApp } = await import(${JSON.stringify(new URL('../../src/http/app.ts', import.meta.url).pathname)});
        const stores = { acquire() { throw new Error('unused'); }, readiness: async () => ({ ready: false }), close: async () => {} };
        const app = await buildApp({ stores, logLevel: 'warn', ...${options} });
        await app.ready();
        await app.close();`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      return run.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).msg);
    };
    assert.deepEqual(startupWarnings('{ trustProxy: 1 }'), [FORWARDED_LINKS_WARNING]);
    assert.match(FORWARDED_LINKS_WARNING, /set PUBLIC_BASE_URL/);
    assert.deepEqual(startupWarnings("{ trustProxy: ['10.0.0.5'], publicBaseUrl: 'https://api.example.org' }"), []);
    assert.deepEqual(startupWarnings('{}'), []);
  });
});
