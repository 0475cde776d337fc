import fp from 'fastify-plugin';
import { isOperationalTarget } from '../../operational.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Shares the event loop's turns between requests and streams (see Turns). */
    turns: Turns;
  }
}

/** Milliseconds of requests' and streams' work one turn of the event loop takes, by default. */
export const DEFAULT_TURN_BUDGET_MS = 5;

/**
 * Shares the event loop's turns. Node (libuv since 1.45) accepts at most one new connection per
 * turn, and a turn runs every request whose bytes have arrived: under 256 busy connections a turn
 * took 250 ms, so 4 connections a second were accepted and a new client waited seconds. Here work
 * starts in arrival order while the current turn has spent less than its budget; the rest waits
 * for a later turn, so turns stay about that short and each accepts a connection.
 */
export class Turns {
  private readonly budgetMs: number;
  /** When the current turn's budget began: at the start of its check phase (see mark). */
  private startedAt = -Infinity;
  private marked = false;
  /** Work waiting for a turn, in order of arrival. */
  private readonly queue: (() => void)[] = [];

  constructor(budgetMs: number) {
    this.budgetMs = budgetMs;
  }

  /**
   * Undefined when this work may start now (the turn has budget left and nothing waits); else a
   * promise that resolves in this turn's check phase or a later one, in order of arrival.
   */
  take(): Promise<void> | undefined {
    if (this.queue.length === 0 && performance.now() - this.startedAt < this.budgetMs) return undefined;
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.slot();
    });
  }

  /**
   * One immediate per waiting piece of work. Immediates run one after another, each followed by
   * the microtasks it starts, so a started piece has run (up to its first real wait: a compression,
   * a write) before the clock is read again. A slot that finds the budget spent moves to the next
   * turn, behind a new mark. Slots start the oldest waiting work, whichever slot it was that queued it.
   */
  private slot(): void {
    if (!this.marked) {
      this.marked = true;
      setImmediate(this.mark);
    }
    setImmediate(this.startOldest);
  }

  private readonly mark = (): void => {
    this.marked = false;
    this.startedAt = performance.now();
  };

  private readonly startOldest = (): void => {
    if (performance.now() - this.startedAt >= this.budgetMs) return this.slot();
    this.queue.shift()?.();
  };
}

/**
 * Every request but health probes and metrics waits for its turn (see Turns), before it takes a
 * dataset lease; probes are answered in the turn they arrive in, however busy the server.
 */
export default fp<{ budgetMs: number }>(
  async (app, { budgetMs }) => {
    const turns = new Turns(budgetMs);
    app.decorate('turns', turns);
    app.addHook('onRequest', (request, _reply, done) => {
      const wait = isOperationalTarget(request.url) ? undefined : turns.take();
      if (wait === undefined) done();
      else void wait.then(() => done());
    });
  },
  { name: 'turns' },
);
