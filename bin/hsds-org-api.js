#!/usr/bin/env node
// The hsds-org-api command. The code is TypeScript run by Node 24 directly; when an older Node
// starts this file, it hands over to the Node 24 pinned in node_modules (the `node` package).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const cli = new URL('../src/cli.ts', import.meta.url);
const major = Number(process.versions.node.split('.')[0]);

if (major >= 24) {
  await import(cli.href);
} else {
  let pinned;
  try {
    pinned = createRequire(import.meta.url).resolve('node/bin/node');
  } catch {
    process.stderr.write(`hsds-org-api needs Node.js 24 or later (this is ${process.version}); run npm install first.\n`);
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(cli), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
}
