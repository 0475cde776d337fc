/**
 * One hot request, measured honestly: wrk (a separate process) loads, in interleaved rounds, a bare
 * node:http server sending the recorded bytes of the answer (the runtime's ceiling,
 * bench/lib/baseline-server.ts) and this API serving it, and, with --compare, the API of another
 * checkout (say, a worktree at an earlier commit) serving the same data directory. It prints each
 * round's requests per second and each server's ratio to the ceiling of the same round.
 *
 *   node bench/hot-page.ts --data-dir /srv/hsds [--compare ../before] [--rounds 3] [--seconds 10]
 *                          [--connections 32] [--path /api/hsds/v3/organizations?page=3] [--encoding br]
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { get } from 'node:http';
import { parseArgs } from 'node:util';

const REPO = resolve(import.meta.dirname, '..');

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    compare: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    path: { type: 'string', default: '/api/hsds/v3/organizations?page=3' },
    encoding: { type: 'string', default: 'br' },
  },
});
if (values['data-dir'] === undefined) {
  process.stderr.write('bench/hot-page.ts needs --data-dir: a published data directory (e.g. after npm start, var/hsds)\n');
  process.exit(2);
}

interface Target {
  name: string;
  port: number;
  process: ChildProcess;
}

/** Starts `args` with Node and waits for `ready` (a line of its output matching it). */
function start(args: string[], cwd: string, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolvePromise, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolvePromise(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`)));
  });
}

let nextPort = 18_000 + Math.floor(Math.random() * 1000);

/** Serves the data directory from `checkout`; resolves once its /readyz answers 200. */
async function startApi(name: string, checkout: string): Promise<Target> {
  const port = nextPort++;
  const args = ['--max-semi-space-size=16', 'src/cli.ts', 'serve', '--data-dir', resolve(values['data-dir']!), '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn', '--progress', 'none'];
  const child = spawn(process.execPath, args, { cwd: checkout, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`${name}: serve exited with ${child.exitCode}`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.status, () => 0);
    if (status === 200) return { name, port, process: child };
    await new Promise((wait) => setTimeout(wait, 100));
  }
  child.kill();
  throw new Error(`${name} was not ready within 60 s`);
}

const headers = { 'accept-encoding': values.encoding! };

/** The answer's status, headers and body bytes as sent (node:http leaves the body compressed). */
function record(port: number): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolvePromise, reject) => {
    get({ host: '127.0.0.1', port, path: values.path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const recorded: Record<string, string> = {};
        for (const [key, value] of Object.entries(response.headers)) {
          // Hop-by-hop: the bare server's own connection handling sets these.
          if (!['connection', 'keep-alive', 'transfer-encoding'].includes(key) && value !== undefined) recorded[key] = String(value);
        }
        resolvePromise({ status: response.statusCode!, headers: recorded, body: Buffer.concat(chunks).toString('base64') });
      });
    }).on('error', reject);
  });
}

function wrk(port: number, seconds: number): Promise<number> {
  const args = ['-t1', `-c${values.connections}`, `-d${seconds}s`, '-H', `accept-encoding: ${values.encoding}`, `http://127.0.0.1:${port}${values.path}`];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolvePromise, reject) => {
    child.once('error', (error) => reject(new Error(`wrk: ${error.message} (apt-get install wrk)`)));
    child.once('exit', () => {
      const match = /Requests\/sec:\s+([\d.]+)/.exec(output);
      if (/Non-2xx/.test(output) || match === null) reject(new Error(`wrk: ${output}`));
      else resolvePromise(Number(match[1]));
    });
  });
}

const targets: Target[] = [];
try {
  const api = await startApi('this checkout', REPO);
  targets.push(api);
  if (values.compare !== undefined) targets.push(await startApi(`--compare ${values.compare}`, resolve(values.compare)));
  const recorded = await record(api.port);
  if (recorded.status !== 200) throw new Error(`${values.path} answered ${recorded.status}`);
  const file = join(mkdtempSync(join(tmpdir(), 'hot-page-')), 'response.json');
  writeFileSync(file, JSON.stringify(recorded));
  const port = nextPort++;
  targets.unshift({ name: 'bare node:http', port, process: await start(['bench/lib/baseline-server.ts', file, String(port)], REPO, /ready/) });

  const seconds = Number(values.seconds);
  // Warm-up: the response cache fills, the JIT settles.
  for (const target of targets) await wrk(target.port, 2);
  const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    // Interleaved, in a different order each round.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) rates.get(target.name)!.push(await wrk(target.port, seconds));
  }
  const ceiling = rates.get('bare node:http')!;
  const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;
  console.log(`GET ${values.path} (Accept-Encoding: ${values.encoding}), ${Buffer.from(recorded.body, 'base64').length} bytes; wrk -t1 -c${values.connections}, ${seconds} s per run, ${values.rounds} rounds interleaved`);
  console.log('| server | req/s per round | ratio to bare node:http per round | median ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, values] of rates) {
    const ratios = values.map((rate, index) => rate / ceiling[index]!);
    console.log(`| ${name} | ${values.map((rate) => Math.round(rate)).join(', ')} | ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')} | ${median(ratios).toFixed(2)} |`);
  }
} finally {
  for (const target of targets) target.process.kill();
}
