/**
 * The screenshots of docs/pages.md: the pages for people of a running server, in Debian's Chromium.
 *   node scripts/page-screenshots.ts http://localhost:8080
 * against `npm start` (the bundled dataset). Writes docs/screenshots/*.png.
 */
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/helpers/browser.ts';

const origin = (process.argv[2] ?? 'http://localhost:8080').replace(/\/+$/, '');
const out = new URL('../docs/screenshots/', import.meta.url);
const SHOTS = [
  ['home', '/', 1100],
  ['search', '/organizations?search=food%20bank', 1100],
  ['organization', '/organizations/920073175', 1100],
  ['taxonomy', '/taxonomies/ntee', 1100],
  ['term', '/taxonomy_terms/ntee:K31', 1100],
  ['search-phone', '/organizations?search=food%20bank', 390],
] as const;

mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  for (const [name, path, width] of SHOTS) {
    const context = await browser.newContext({ viewport: { width, height: 860 } });
    const page = await context.newPage();
    const response = await page.goto(`${origin}${path}`);
    if (response?.status() !== 200) throw new Error(`${path}: ${response?.status()}`);
    await page.screenshot({ path: new URL(`${name}.png`, out).pathname });
    await context.close();
    console.log(`docs/screenshots/${name}.png: ${path}`);
  }
} finally {
  await browser.close();
}
