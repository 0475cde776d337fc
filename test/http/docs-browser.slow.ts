import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { API, startTestApp } from '../helpers/app.ts';
import { ARTIFACTS, browserTest, inBrowser, watch } from '../helpers/browser.ts';

const SCREENSHOT = new URL('docs.png', ARTIFACTS);

describe('documentation page', () => {
  it('is Swagger UI over /openapi.json, its assets served by the app, at /docs and /docs/', async () => {
    const test = await startTestApp();
    try {
      for (const path of [`${API}/docs`, `${API}/docs/`]) {
        const response = await test.app.inject({ url: path });
        assert.equal(response.statusCode, 200, path);
        assert.match(String(response.headers['content-type']), /^text\/html/);
        assert.match(String(response.headers['content-security-policy']), /default-src 'self'/);
        // Every URL in the page is a path on this server: no scheme, no host.
        const urls = [...response.body.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1]!);
        assert.ok(urls.length >= 5, `${path}: ${urls.join(' ')}`);
        for (const url of urls) assert.match(url, /^\.?\/(?!\/)/, `${path} refers to ${url}`);
        for (const url of urls) {
          const asset = await test.app.inject({ url: new URL(url, `http://localhost${path}`).pathname });
          assert.equal(asset.statusCode, 200, url);
        }
      }
      const initializer = await test.app.inject({ url: `${API}/docs/static/swagger-initializer.js` });
      assert.match(initializer.body, /"urls":\[\{"url":"\/api\/hsds\/v3\/openapi\.json"/);
      const document = JSON.parse((await test.app.inject({ url: `${API}/openapi.json` })).body);
      assert.deepEqual(Object.keys(document.paths).filter((path) => path.includes('docs')), []);
    } finally {
      await test.close();
    }
  });

  it('prefixes its own URLs with the path of the public base URL', async () => {
    const test = await startTestApp(undefined, { publicBaseUrl: 'https://data.example.org/hsds' });
    try {
      const page = await test.app.inject({ url: `${API}/docs` });
      assert.match(page.body, /src="\/hsds\/api\/hsds\/v3\/docs\/static\/swagger-ui-bundle\.js"/);
      const initializer = await test.app.inject({ url: `${API}/docs/static/swagger-initializer.js` });
      assert.match(initializer.body, /"urls":\[\{"url":"\/hsds\/api\/hsds\/v3\/openapi\.json"/);
    } finally {
      await test.close();
    }
  });

  it(
    'renders every operation in headless Chromium, with no request beyond the app',
    browserTest,
    async () => {
      await inBrowser(async ({ origin, browser, app }) => {
        const served: string[] = [];
        app.server.on('request', (request) => served.push(String(request.url)));
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        const { requested, problems } = watch(context, page);

        const document = JSON.parse((await app.inject({ url: `${API}/openapi.json` })).body);
        const operations = Object.values<any>(document.paths).flatMap((item) => Object.values<any>(item));
        assert.ok(operations.some((operation) => operation.operationId === 'getPaginatedListOfOrganizations'));

        for (const path of [`${API}/docs`, `${API}/docs/`]) {
          const response = await page.goto(`${origin}${path}`);
          assert.equal(response?.status(), 200, path);
          await assertRendered(page, document, operations);
          await page.waitForLoadState('networkidle');
          if (path === `${API}/docs`) {
            mkdirSync(ARTIFACTS, { recursive: true });
            await page.screenshot({ path: fileURLToPath(SCREENSHOT), fullPage: true });
          }
        }
        await context.close();

        assert.ok(requested.length > 0);
        const foreign = requested.filter((url) => !url.startsWith(`${origin}/`));
        assert.deepEqual(foreign, [], `requests beyond ${origin}:\n${foreign.join('\n')}`);
        assert.deepEqual(problems, []);
        // The page read the served document (with this server's URL), not the plugin's own copy.
        assert.ok(requested.includes(`${origin}${API}/openapi.json`), requested.join('\n'));
        assert.ok(!requested.some((url) => url.includes('/docs/json')), requested.join('\n'));
        for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-initializer.js']) {
          assert.ok(served.some((url) => url.endsWith(`/docs/static/${asset}`)), `${asset} not served by the app`);
        }
      });
    },
  );

  it(
    'tries GET /organizations out sending only what was typed, shows the JSON answered, and offers every value of format',
    browserTest,
    async () => {
      await inBrowser(async ({ origin, browser, app }) => {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        await page.goto(`${origin}${API}/docs`);
        const operation = page.locator('#operations-optional-getPaginatedListOfOrganizations');
        await operation.waitFor({ timeout: 30_000 });
        await operation.locator('.opblock-summary-control').click();
        await operation.locator('.try-out__btn').click();

        const format = operation.locator('tr[data-param-name="format"]');
        assert.equal(await format.locator('.parameter__type').innerText(), 'string');
        assert.deepEqual(await format.locator('select option').allInnerTexts(), ['--', 'json', 'ndjson', 'csv']);
        // Examples and defaults are read in the descriptions; no input starts out holding one.
        const filled: string[] = [];
        for (const row of await operation.locator('tbody tr[data-param-name]').all()) {
          const value = await row.locator('input, select').first().inputValue();
          if (value !== '') filled.push(`${await row.getAttribute('data-param-name')}=${value}`);
        }
        assert.deepEqual(filled, [], 'parameters filled before anything was typed');
        assert.match(await operation.locator('tr[data-param-name="search"] .parameters-col_description').innerText(), /Example: food bank/);

        const search = operation.locator('tr[data-param-name="search"] input');
        await search.fill('food bank');
        // Swagger UI takes the typed text in when the field is left (or after a pause).
        await search.blur();
        const sent = page.waitForRequest((request) => new URL(request.url()).pathname === `${API}/organizations`);
        await operation.locator('button.execute').click();
        const requestUrl = new URL((await sent).url());
        assert.match(requestUrl.search, /^\?search=food(%20|\+)bank$/);
        const shown = operation.locator('.responses-wrapper .request-url pre');
        await shown.waitFor();
        assert.equal(await shown.innerText(), requestUrl.href);

        const body = operation.locator('.live-responses-table .response-col_description pre').first();
        await body.waitFor();
        const text = await body.innerText();
        assert.doesNotMatch(text, /can't parse JSON/);
        assert.match(text, /"total_items"/);
        assert.ok(JSON.parse(text).contents.some((organization: any) => organization.name === 'Zeta Food Bank'), text);
      });
    },
  );
});

describe('profile page', () => {
  it(
    'reads as a page in headless Chromium, on a desktop and on a phone, and loads nothing else',
    browserTest,
    async () => {
      await inBrowser(async ({ origin, browser, app }) => {
        for (const [name, viewport] of [['profile.png', { width: 1280, height: 900 }], ['profile-phone.png', { width: 390, height: 844 }]] as const) {
          const context = await browser.newContext({ viewport });
          const page = await context.newPage();
          const { requested, problems } = watch(context, page);
          const response = await page.goto(`${origin}${API}/profile`);
          assert.equal(response?.status(), 200);
          assert.match(String(response?.headers()['content-type']), /^text\/html/);
          assert.match(await page.locator('h1').innerText(), /profile of HSDS 3\.2\.3/);
          assert.ok(await page.locator('h2#machine-readable').isVisible());
          assert.equal(await page.locator(`a[href="${origin}${API}/profile/schema/organization.json"]`).count(), 1);
          // Nothing wider than the screen: a phone reads it without scrolling sideways.
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          assert.ok(overflow <= 0, `${name}: ${overflow}px wider than the viewport`);
          mkdirSync(ARTIFACTS, { recursive: true });
          await page.screenshot({ path: fileURLToPath(new URL(name, ARTIFACTS)), fullPage: name === 'profile.png' });
          // Its links lead somewhere: the organization schema.
          await page.locator(`a[href="${origin}${API}/profile/schema/organization.json"]`).click();
          assert.match(await page.locator('body').innerText(), /"external_identifier"/);
          assert.deepEqual(requested.filter((url) => !url.startsWith(`${origin}/`)), []);
          assert.deepEqual(problems, []);
          await context.close();
        }
      });
    },
  );
});

/** Waits until Swagger UI shows the document's title, every tag and every operation (by tag and operationId). */
async function assertRendered(page: Page, document: any, operations: any[]): Promise<void> {
  await page.locator('#operations-optional-getPaginatedListOfOrganizations').waitFor({ timeout: 30_000 });
  assert.match(await page.locator('.info .title').innerText(), new RegExp(document.info.title));
  for (const tag of document.tags) {
    assert.equal(await page.locator(`#operations-tag-${tag.name}`).count(), 1, `tag ${tag.name}`);
  }
  for (const operation of operations) {
    const block = page.locator(`#operations-${operation.tags[0]}-${operation.operationId}`);
    assert.equal(await block.count(), 1, operation.operationId);
    assert.match(await block.innerText(), new RegExp(operation.operationId));
  }
  const shown = await page.locator('.opblock').count();
  assert.equal(shown, operations.length);
}
