import { parentPort, workerData } from 'node:worker_threads';
import { parseCsv } from './csv.ts';
import type { Columns, CsvEvent } from './csv.ts';
import type { CsvWorkerReply, CsvWorkerRequest } from './csv-thread.ts';

/** The worker thread of csv-thread.ts's CsvWorker: parses the files it is asked for and sends their events in batches. */
const { eventsPerBatch, batchesAhead } = workerData as { eventsPerBatch: number; batchesAhead: number };
const port = parentPort!;

interface Read {
  /** Batches sent and not yet taken by the reader. */
  untaken: number;
  stopped: boolean;
  resume?: () => void;
}

const reads = new Map<number, Read>();

port.on('message', (request: CsvWorkerRequest) => {
  if ('read' in request) {
    void parse(request.read, request.file, request.columns);
    return;
  }
  const read = reads.get('took' in request ? request.took : request.stop);
  if (read === undefined) return;
  if ('took' in request) read.untaken--;
  else read.stopped = true;
  read.resume?.();
  read.resume = undefined;
});

async function parse(id: number, file: string, columns: Columns): Promise<void> {
  const read: Read = { untaken: 0, stopped: false };
  reads.set(id, read);
  const reply = (message: CsvWorkerReply) => port.postMessage(message);
  let events: CsvEvent[] = [];
  let bytes = 0;
  const sendBatch = async () => {
    reply({ read: id, events, bytes });
    events = [];
    bytes = 0;
    read.untaken++;
    while (read.untaken >= batchesAhead && !read.stopped) await new Promise<void>((resolve) => (read.resume = resolve));
  };
  try {
    for await (const event of parseCsv(file, columns, { onBytes: (count) => (bytes += count) })) {
      events.push(event);
      if (events.length >= eventsPerBatch) await sendBatch();
      if (read.stopped) return;
    }
    if (events.length > 0 || bytes > 0) await sendBatch();
    if (!read.stopped) reply({ read: id, done: true });
  } catch (error) {
    reply({ read: id, crashed: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  } finally {
    reads.delete(id);
  }
}
