import { parentPort, workerData } from 'node:worker_threads';
import { RowRenderer } from './render-organizations.ts';
import type { RenderVocabulary, StagedRow } from './render-organizations.ts';

/** The worker thread of render-organizations.ts: renders and packs each batch it is sent and sends it back. */
const renderer = new RowRenderer(workerData as RenderVocabulary);

parentPort!.on('message', ({ batch, rows }: { batch: number; rows: StagedRow[] }) => {
  try {
    parentPort!.postMessage({ batch, rendered: rows.map((row) => renderer.render(row)) });
  } catch (error) {
    parentPort!.postMessage({ batch, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
