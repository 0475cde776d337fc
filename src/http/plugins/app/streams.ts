import { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import { ServiceBusy } from '../../problem.ts';
import type { Turns } from './turns.ts';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Sends a body made chunk by chunk from the request's dataset (an export: NDJSON, CSV), or
     * throws ServiceBusy when --max-exports are already under way. See the plugin below.
     */
    sendStream(contentType: string, chunks: AsyncIterable<string>): FastifyReply;
  }
}

/** What a refused export is told to wait: about what an export of a state's dataset takes. */
const EXPORT_RETRY_AFTER_SECONDS = 10;

/**
 * Each chunk is made in its turn, shared with requests (see turns.ts). A store read synchronously
 * (SQLite) and a client that takes every byte at once (loopback, a fast network) would otherwise
 * keep the whole export within one turn of the event loop: no other request, probe or new
 * connection answered until it ends. (Compressed exports had turns already, from zlib's threads.)
 */
async function* takingTurns(turns: Turns, chunks: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const chunk of chunks) {
    yield chunk;
    await turns.take();
  }
}

/**
 * Streamed bodies: at most `maxExports` at once (more are answered 503 with Retry-After), each
 * holding its request's dataset until it ends however it ends (finished, client gone, or cut by
 * the server's idle timeout, see limits.ts), its chunks made in turns shared with requests. The
 * stream pulls the next chunk only when the client has taken the last: one chunk is held at a time.
 */
export default fp<{ maxExports: number }>(
  async (app, { maxExports }) => {
    let underWay = 0;
    app.decorateReply('sendStream', function (this, contentType: string, chunks: AsyncIterable<string>) {
      if (underWay >= maxExports) {
        throw new ServiceBusy(`${maxExports} exports are under way, the most this server runs at once. Try again in ${EXPORT_RETRY_AFTER_SECONDS} s.`, EXPORT_RETRY_AFTER_SECONDS);
      }
      underWay++;
      const release = this.request.holdStore();
      const stream = Readable.from(takingTurns(app.turns, chunks), { objectMode: false, highWaterMark: 1 });
      stream.once('close', () => {
        underWay--;
        release();
      });
      return this.type(contentType).send(stream);
    });
  },
  { name: 'streams', dependencies: ['store', 'turns'] },
);
