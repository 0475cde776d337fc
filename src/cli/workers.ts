import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { METRICS_REQUEST } from '../http/plugins/app/metrics.ts';
import type { MetricsMessage } from '../http/plugins/app/metrics.ts';
import { servingMessage, STOPPED_MESSAGE } from './serving.ts';

/** What this process sends a worker to make it drain and exit, as SIGTERM would. */
export const WORKER_STOP = 'hsds:stop';

/**
 * `serve --workers N`: this process starts N copies of itself (node:cluster), which listen on the
 * same port (the operating system hands each new connection to one of them), each with its own
 * store following publishes on its own, response cache and log. This process serves nothing: it
 * answers the workers' requests for the metrics of all of them (prom-client's AggregatorRegistry),
 * replaces a worker that dies, and on SIGTERM or SIGINT tells every worker to drain (a message, not
 * the signal: a terminal's Ctrl-C or systemd may have signalled them already, and a second signal
 * makes a worker exit at once), waits for them and exits with the worst of their codes.
 */
export function runWorkers(count: number, write: (line: string) => void): Promise<number> {
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  let worst = 0;
  const listening = new Set<number>();
  // Workers forked and not yet exited. Not cluster.workers: it keeps a worker until it has exited and
  // disconnected, and when the disconnect comes last, it still holds the worker whose 'exit' is the last.
  const running = new Set<number>();
  const fork = () => running.add(cluster.fork().id);
  let announced = false;

  cluster.on('message', (worker: Worker, message: MetricsMessage) => {
    if (message?.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_REQUEST, id: message.id, text } satisfies MetricsMessage),
      (error: Error) => worker.send({ type: METRICS_REQUEST, id: message.id, error: error.message } satisfies MetricsMessage),
    );
  });
  cluster.on('listening', (worker, address) => {
    listening.add(worker.id);
    if (!announced && listening.size === count) {
      announced = true;
      const pids = Object.values(cluster.workers ?? {}).map((each) => each!.process.pid);
      write(`${servingMessage(address.address, address.port)}, from ${count} workers (pids ${pids.join(', ')})`);
    }
  });

  return new Promise((resolve) => {
    let signalled = false;
    const stopped = () => {
      // A worker that could not start has had its error line: nothing was serving to stop.
      if (signalled) write(worst === 0 ? STOPPED_MESSAGE : `Stopped; a worker exited with code ${worst} (see the log).`);
      resolve(worst);
    };
    cluster.on('exit', (worker, code, signal) => {
      running.delete(worker.id);
      const failed = code !== 0 || (signal !== null && !stopping);
      if (failed) worst = Math.max(worst, code ?? 1);
      const wasListening = listening.delete(worker.id);
      if (stopping) {
        if (running.size === 0) stopped();
        return;
      }
      // A worker that never listened cannot start (a port in use, a damaged dataset): neither can another.
      if (!wasListening) {
        write(`Error: a worker exited with ${signal ?? code} before it was serving; stopping the others.`);
        stop();
        return;
      }
      write(`worker ${worker.process.pid} exited with ${signal ?? code}; starting another`);
      fork();
    });
    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) {
        if (worker?.isConnected()) worker.send({ type: WORKER_STOP });
      }
      if (running.size === 0) stopped();
    };
    const onSignal = () => {
      signalled = true;
      stop();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    for (let index = 0; index < count; index++) fork();
  });
}
