/**
 * How many connections Node accepts per turn of its event loop (`node bench/accept-per-turn.ts`):
 * a bare node:http server (a child process) whose every turn is kept busy 100 ms, and 20
 * connections opened at once from this process. Prints when each got its answer and how many the
 * server accepted in each turn. On Node 24 (libuv since 1.45 accepts once per turn): one per turn,
 * answers 100 ms apart.
 */
import { fork } from 'node:child_process';
import { request } from 'node:http';

const CONNECTIONS = 20;
const TURN_MS = 100;

if (process.argv[2] === 'server') {
  const { createServer } = await import('node:http');
  let turn = 0;
  const acceptedIn: number[] = [];
  const server = createServer((_request, response) => response.end('ok'));
  server.on('connection', () => acceptedIn.push(turn));
  // A timer that spins: each turn of the loop takes TURN_MS.
  const spin = () => {
    turn++;
    const end = performance.now() + TURN_MS;
    while (performance.now() < end);
    setTimeout(spin, 0);
  };
  process.on('message', () => process.send!({ acceptedIn }, () => process.exit(0)));
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as { port: number }).port });
    setTimeout(spin, 0);
  });
} else {
  const child = fork(import.meta.filename, ['server']);
  const port = await new Promise<number>((resolve) => child.once('message', (message: { port: number }) => resolve(message.port)));
  const report = new Promise<number[]>((resolve) => child.on('message', (message: { acceptedIn?: number[] }) => message.acceptedIn && resolve(message.acceptedIn)));
  const started = performance.now();
  const answeredAfter = await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port, agent: false }, (response) => {
            response.resume();
            response.on('end', () => resolve(performance.now() - started));
          })
            .on('error', reject)
            .end();
        }),
    ),
  );
  child.send('report');
  const acceptedIn = await report;
  const perTurn = new Map<number, number>();
  for (const turn of acceptedIn) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
  process.stdout.write(
    `Node ${process.version}: ${CONNECTIONS} connections opened at once, turns of ${TURN_MS} ms\n` +
      `answered after (ms): ${answeredAfter.sort((a, b) => a - b).map((ms) => Math.round(ms)).join(' ')}\n` +
      `accepted in ${perTurn.size} turns, at most ${Math.max(...perTurn.values())} in one\n`,
  );
}
