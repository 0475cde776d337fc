import { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';
import { ClientBusy, ServiceBusy } from '../../problem.ts';
import type { Turns } from './turns.ts';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Sends a body made chunk by chunk from the request's dataset (an export: NDJSON, CSV), once its
     * turn on the connection has come; or a 503 or 429 problem when the server, or this client, has
     * as many exports under way as it may. See the plugin below.
     */
    sendStream(contentType: string, chunks: AsyncIterable<string>): FastifyReply;
  }
}

/** What a refused export is told to wait: about what an export of a state's dataset takes. */
const EXPORT_RETRY_AFTER_SECONDS = 10;

/**
 * Exports one client (one address, as --trust-proxy makes it) may have under way at once: a quarter
 * of the server's, at least one, so that no client can take every slot and keep the others waiting.
 */
const exportsPerClient = (maxExports: number): number => Math.max(1, Math.floor(maxExports / 4));

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
 * Streamed bodies: at most `maxExports` at once (more are answered 503 with Retry-After), and at most
 * a share of them per client (more are answered 429, see exportsPerClient). An export takes its slot
 * only when its response is the one its connection sends: one pipelined behind another waits, holding
 * none, so a connection holds one slot at most. Each holds its request's dataset until it ends however
 * it ends (finished, client gone, or cut by the server's idle time, see connections.ts), its chunks
 * made in turns shared with requests. The stream pulls the next chunk only when the client has taken
 * the last: one chunk is held at a time.
 */
export default fp<{ maxExports: number }>(
  async (app, { maxExports }) => {
    const perClient = exportsPerClient(maxExports);
    let underWay = 0;
    const underWayFrom = new Map<string, number>();

    /** The export's slot, or why there is none. */
    function takeSlot(client: string): Error | (() => void) {
      const fromClient = underWayFrom.get(client) ?? 0;
      if (fromClient >= perClient) {
        return new ClientBusy(
          `${fromClient} exports under way from ${client}, the most one client may run at once. Try again when one has ended, in about ${EXPORT_RETRY_AFTER_SECONDS} s.`,
          EXPORT_RETRY_AFTER_SECONDS,
        );
      }
      if (underWay >= maxExports) {
        return new ServiceBusy(`${maxExports} exports are under way, the most this server runs at once. Try again in ${EXPORT_RETRY_AFTER_SECONDS} s.`, EXPORT_RETRY_AFTER_SECONDS);
      }
      underWay++;
      underWayFrom.set(client, fromClient + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        underWay--;
        const left = underWayFrom.get(client)! - 1;
        if (left === 0) underWayFrom.delete(client);
        else underWayFrom.set(client, left);
      };
    }

    function start(reply: FastifyReply, contentType: string, chunks: AsyncIterable<string>): FastifyReply {
      const slot = takeSlot(reply.request.ip);
      if (slot instanceof Error) return reply.send(slot);
      const release = reply.request.holdStore();
      const stream = Readable.from(takingTurns(app.turns, chunks), { objectMode: false, highWaterMark: 1 });
      // Free at its last chunk, before its response ends: the next export pipelined on the connection
      // is given its turn as that response ends, and takes a slot then.
      stream.once('end', slot);
      stream.once('close', () => {
        slot();
        release();
      });
      return reply.type(contentType).send(stream);
    }

    app.decorateReply('sendStream', function (this: FastifyReply, contentType: string, chunks: AsyncIterable<string>) {
      const response = this.raw;
      // Node gives a response pipelined behind another its connection once the one before has ended.
      if (response.socket !== null) return start(this, contentType, chunks);
      const onTurn = () => start(this, contentType, chunks);
      response.once('socket', onTurn);
      // The connection closed first: the response ends without its turn.
      response.once('close', () => response.off('socket', onTurn));
      return this;
    });
  },
  { name: 'streams', dependencies: ['store', 'turns'] },
);
