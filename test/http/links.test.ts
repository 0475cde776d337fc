import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, getJson, startTestApp } from '../helpers/app.ts';
import { assertHsds } from '../helpers/hsds-schemas.ts';

const forwarded = { host: 'internal:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example.org' };

describe('absolute links', () => {
  it('come from the request host by default, ignoring X-Forwarded-*', async () => {
    const test = await startTestApp();
    try {
      const { body } = await getJson(test.app, `${API}/organizations?per_page=2`, forwarded);
      assert.equal(body.links.first, 'http://internal:8080/api/hsds/v3/organizations?per_page=2&page=1');
    } finally {
      await test.close();
    }
  });

  it('honour X-Forwarded-Proto and -Host when trusting a proxy', async () => {
    const test = await startTestApp(undefined, { trustProxy: true });
    try {
      const { body } = await getJson(test.app, `${API}/organizations?per_page=2`, forwarded);
      assert.equal(body.links.first, 'https://public.example.org/api/hsds/v3/organizations?per_page=2&page=1');
    } finally {
      await test.close();
    }
  });

  it('come from the configured public base URL when set, whatever the request says', async () => {
    const test = await startTestApp(undefined, { publicBaseUrl: 'https://data.example.org/hsds', trustProxy: true });
    try {
      const { body } = await getJson(test.app, `${API}/organizations?per_page=2`, forwarded);
      assert.equal(body.links.next, 'https://data.example.org/hsds/api/hsds/v3/organizations?per_page=2&page=2');
      const root = await getJson(test.app, API, forwarded);
      assert.equal(root.body.openapi_url, 'https://data.example.org/hsds/api/hsds/v3/openapi.json');
    } finally {
      await test.close();
    }
  });

  it('never echo a malformed Host or X-Forwarded-Proto', async () => {
    const test = await startTestApp(undefined, { trustProxy: true });
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
});
