import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchRenderer } from '../../src/build/render-organizations.ts';
import type { StagedRow } from '../../src/build/render-organizations.ts';

const row = (externalId: string, tags: unknown[] = []): StagedRow => ({
  record: JSON.stringify({ externalId, status: 'published', name: `Org ${externalId}`, identifiers: [], tags }),
  tags: null,
  identifiers: null,
  urls: null,
  parent_published: null,
});

describe('rendering organizations on a worker thread', () => {
  it('renders batches in the order sent', async () => {
    const renderer = batchRenderer({ terms: [], implied: [] }, true);
    try {
      const batches = await Promise.all([renderer.render([row('1'), row('2')]), renderer.render([row('3')])]);
      assert.deepEqual(batches.map((batch) => batch.map((rendered) => rendered.externalId)), [['1', '2'], ['3']]);
      assert.equal(batches[0]![0]!.name, 'Org 1');
    } finally {
      await renderer.close();
    }
  });

  it('fails the batch that cannot be rendered, and neither the batch after it nor closing leaves an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const renderer = batchRenderer({ terms: [], implied: [] }, true);
    try {
      // A tag of a term the vocabulary lacks: the build checks tags first, so only a bug gets here.
      const failing = renderer.render([row('1', [{ taxonomy: 'x', code: 'y' }])]);
      // The build awaits batches in order and stops at the first that fails: the next one's failure,
      // answered before anyone waits for it, is not awaited at all.
      const notAwaited = renderer.render([row('2', [{ taxonomy: 'x', code: 'z' }])]);
      const last = renderer.render([row('3')]);
      await assert.rejects(failing, /rendering organizations failed/);
      // Answers come in order: once the last is in, the one before it has failed.
      await last;
      await renderer.close();
      // Unhandled rejections are reported once the microtasks of a turn have run.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
      await assert.rejects(notAwaited);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
