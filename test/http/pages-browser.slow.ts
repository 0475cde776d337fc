import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ARTIFACTS, browserTest, inBrowser, watch } from '../helpers/browser.ts';

/** A person's walk through the pages, in headless Chromium: what they read, where the links lead, and axe-core's accessibility check. */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations of impact serious or critical on the page shown, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = (await page.evaluate(`${AXE_SOURCE}\naxe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  };
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${page.url()}: ${violation.id} (${violation.impact}) ${violation.help}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

async function check(page: Page, shot: string, found: string[]): Promise<void> {
  found.push(...(await seriousViolations(page)));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${page.url()}: ${overflow}px wider than the viewport`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: fileURLToPath(new URL(shot, ARTIFACTS)), fullPage: true });
}

describe('pages for people in a browser', () => {
  it('walk from the home page to a search, an organization, its term, and back, readable and accessible on a desktop and a phone', browserTest, async () => {
    await inBrowser(async ({ origin, browser }) => {
      for (const [device, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
        const context = await browser.newContext({ viewport, javaScriptEnabled: true });
        const page = await context.newPage();
        const { requested, problems } = watch(context, page);
        const violations: string[] = [];

        const home = await page.goto(`${origin}/`);
        assert.equal(home?.status(), 200);
        assert.equal(await page.locator('h1').innerText(), 'Organizations and taxonomies');
        assert.match(await page.locator('main').innerText(), /23 published organizations/);
        await check(page, `pages-home-${device}.png`, violations);

        await page.locator('#home-search').fill('shelter');
        await page.locator('main button[type=submit]').click();
        await page.waitForURL(/\/organizations\?search=shelter$/);
        assert.match(await page.locator('h1').innerText(), /Organizations matching “shelter”/);
        const results = await page.locator('ol.results > li > a').allInnerTexts();
        assert.deepEqual(results.slice(0, 2), ['alpha shelter', 'Sigma Shelter']);
        await check(page, `pages-search-${device}.png`, violations);

        await page.locator('ol.results > li > a', { hasText: 'alpha shelter' }).click();
        await page.waitForURL(/\/organizations\/[0-9a-f-]{36}$/);
        assert.equal(await page.locator('h1').innerText(), 'alpha shelter');
        const organizationUrl = page.url();
        await check(page, `pages-organization-${device}.png`, violations);

        await page.locator('main a', { hasText: 'Thing B' }).click();
        await page.waitForURL(/\/taxonomy_terms\/[0-9a-f-]{36}$/);
        assert.match(await page.locator('h1').innerText(), /^Thing B/);
        assert.ok(await page.locator('ol.results a', { hasText: 'alpha shelter' }).isVisible(), 'the term lists the organization');
        await check(page, `pages-term-${device}.png`, violations);

        await page.goBack();
        assert.equal(page.url(), organizationUrl);
        assert.equal(await page.locator('h1').innerText(), 'alpha shelter');

        // The JSON the page shows is one link away.
        await page.locator('main .json a').click();
        assert.equal(JSON.parse(await page.locator('body').innerText()).name, 'alpha shelter');

        const taxonomy = await page.goto(`${origin}/taxonomies/things`);
        assert.equal(taxonomy?.status(), 200);
        await page.locator('li', { has: page.locator('a', { hasText: /^Thing A$/ }) }).locator('summary').first().click();
        assert.ok(await page.locator('details[open] a', { hasText: 'Thing F' }).isVisible(), 'opening a term shows the terms below it');
        await check(page, `pages-taxonomy-${device}.png`, violations);

        assert.deepEqual(violations, []);
        assert.deepEqual(problems, []);
        assert.deepEqual(requested.filter((url) => !url.startsWith(`${origin}/`)), [], 'nothing loaded from elsewhere');
        await context.close();
      }
    });
  });
});
