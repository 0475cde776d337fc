import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp } from './app.ts';

/** Debian's Chromium (apt-get install chromium); .ci/run installs it. No browser is downloaded. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and nothing that reaches out: this machine's network is closed. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `it` options of a browser test: skipped without Chromium, except in CI, where it must be there. */
export const browserTest = {
  skip: !existsSync(CHROMIUM) && process.env.CI !== 'true' ? `${CHROMIUM} not found (apt-get install chromium)` : false,
  timeout: 120_000,
};

export const ARTIFACTS = new URL('../.artifacts/', import.meta.url);

/** The fixture served on a port of its own and a Chromium, both closed once `use` is done. */
export async function inBrowser(use: (opened: { origin: string; browser: Browser; app: FastifyInstance }) => Promise<void>): Promise<void> {
  const test = await startTestApp();
  await test.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    await use({ origin, browser, app: test.app });
  } finally {
    await browser.close();
    await test.close();
  }
}

/**
 * What a page's context requests, and what goes wrong: failed requests, console errors and warnings,
 * page errors. Not the icon Chromium asks the site for when it shows a JSON document: the API has none.
 */
export function watch(context: BrowserContext, page: Page): { requested: string[]; problems: string[] } {
  const requested: string[] = [];
  const problems: string[] = [];
  context.on('request', (request) => requested.push(request.url()));
  context.on('requestfailed', (request) => {
    if (!request.url().endsWith('/favicon.ico')) problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on('console', (message) => {
    if ((message.type() === 'error' || message.type() === 'warning') && !message.location().url.endsWith('/favicon.ico')) {
      problems.push(`console ${message.type()}: ${message.text()} ${message.location().url}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { requested, problems };
}
