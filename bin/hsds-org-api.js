#!/usr/bin/env node
// The hsds-org-api command. The code is TypeScript run directly by Node 24, with the flags in
// node-flags.js; this starter runs it in a child process: this Node when it is 24 or later, else
// the Node 24 pinned in node_modules (the `node` package).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from './node-flags.js';

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const major = Number(process.versions.node.split('.')[0]);

let node = process.execPath;
if (major < 24) {
  try {
    node = createRequire(import.meta.url).resolve('node/bin/node');
  } catch {
    process.stderr.write(`hsds-org-api needs Node.js 24 or later (this is ${process.version}); run npm install first.\n`);
    process.exit(1);
  }
}
// The IPC channel closes when this process dies, even by SIGKILL, which it cannot pass on: the child
// then stops as on SIGTERM (src/cli.ts), so that no server is left behind holding the port.
const child = spawn(node, [...NODE_FLAGS, cli, ...process.argv.slice(2)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
