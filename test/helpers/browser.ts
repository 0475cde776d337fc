import { existsSync } from 'node:fs';

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
