import { createServer } from 'node:net';

/** Resolves when `condition` holds, checking every few milliseconds; rejects after `timeoutMs`. Returns the wait in ms. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - started;
}

/** A TCP port free on the loopback interface now (for a server a test starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
