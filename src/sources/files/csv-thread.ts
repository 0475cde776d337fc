import { Worker } from 'node:worker_threads';
import type { Columns, CsvEvent } from './csv.ts';
import type { InputOptions } from './text-input.ts';

/**
 * The main side of parsing CSV files on a worker thread (csv.ts's readCsv uses it for large files;
 * csv-worker.ts is the worker).
 */

/** Events cross from the worker in batches; this many are sent ahead of the reader at most. */
export const EVENTS_PER_BATCH = 500;
export const BATCHES_AHEAD = 4;
/**
 * The worker ends when no file has been read for this long: a source's files are read one after the
 * other, and the build's next stage should not have the worker's memory beside its own.
 */
const WORKER_IDLE_MS = 50;

/** To the worker: read a file, the reader took a batch, or the reader stopped. */
export type CsvWorkerRequest = { read: number; file: string; columns: Columns } | { took: number } | { stop: number };
/** From the worker, about read `read`: events, the end, or a failure that is not the file's. */
export type CsvWorkerReply = { read: number } & ({ events: CsvEvent[]; bytes: number } | { done: true } | { crashed: string });

interface PendingRead {
  replies: CsvWorkerReply[];
  failure?: Error;
  wake?: () => void;
}

/**
 * One worker thread parses the CSV files of an import, one after another (or several at once),
 * started with the first and ended when idle: starting one per file would cost more than small
 * files save. Each read's batches come a few ahead and then wait for the reader to take them, so a
 * slow reader holds the parse back rather than memory growing.
 */
export class CsvWorker {
  private static current: CsvWorker | undefined;
  private readonly worker: Worker;
  private readonly reads = new Map<number, PendingRead>();
  private nextRead = 0;
  private idle: NodeJS.Timeout | undefined;

  static get(): CsvWorker {
    return (CsvWorker.current ??= new CsvWorker());
  }

  private constructor() {
    this.worker = new Worker(new URL('./csv-worker.ts', import.meta.url), {
      workerData: { eventsPerBatch: EVENTS_PER_BATCH, batchesAhead: BATCHES_AHEAD },
      resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 },
    });
    this.worker.on('message', (reply: CsvWorkerReply) => {
      const read = this.reads.get(reply.read);
      if (read === undefined) return;
      read.replies.push(reply);
      read.wake?.();
    });
    const fail = (error: Error) => {
      if (CsvWorker.current === this) CsvWorker.current = undefined;
      for (const read of this.reads.values()) {
        read.failure ??= error;
        read.wake?.();
      }
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the CSV parsing worker stopped (exit code ${code})`)));
  }

  async *read(file: string, columns: Columns, options: InputOptions): AsyncGenerator<CsvEvent> {
    const id = ++this.nextRead;
    const read: PendingRead = { replies: [] };
    this.reads.set(id, read);
    clearTimeout(this.idle);
    this.worker.ref();
    this.send({ read: id, file, columns });
    let finished = false;
    try {
      for (;;) {
        const reply = read.replies.shift();
        if (reply === undefined) {
          if (read.failure !== undefined) throw read.failure;
          await new Promise<void>((resolve) => (read.wake = resolve));
          read.wake = undefined;
          continue;
        }
        if ('done' in reply) break;
        if ('crashed' in reply) throw new Error(`parsing ${file} failed: ${reply.crashed}`);
        this.send({ took: id });
        if (reply.bytes > 0) options.onBytes?.(reply.bytes);
        yield* reply.events;
      }
      finished = true;
    } finally {
      this.reads.delete(id);
      if (!finished) this.send({ stop: id });
      if (this.reads.size === 0) {
        this.worker.unref();
        this.idle = setTimeout(() => this.close(), WORKER_IDLE_MS).unref();
      }
    }
  }

  private send(request: CsvWorkerRequest): void {
    this.worker.postMessage(request);
  }

  private close(): void {
    if (this.reads.size > 0) return;
    if (CsvWorker.current === this) CsvWorker.current = undefined;
    void this.worker.terminate();
  }
}

