import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What each connection has under way, for the rules that hold per connection rather than per
 * request: how long its responses may make no progress (the idle cut), and when an answer that ends
 * the connection (a malformed request ending a pipeline) may be written.
 */
interface Connection {
  /** Responses begun and not over: the one being sent and those pipelined behind it. */
  responses: number;
  /** The client's progress when last looked at (see progressOf; -1: not yet), and when it last changed. */
  written: number;
  queued: number;
  progressAt: number;
  /** What to write once no response is under way. */
  last?: () => void;
}

const connections = new WeakMap<Socket, Connection>();

/**
 * Bytes of the connection's writes the client has taken whole, and bytes of the write under way it
 * has yet to take. The second is libuv's count, which Node's own socket timeout reads too: without
 * it, a client that takes a large chunk slowly would look stalled until the whole chunk is taken.
 */
function progressOf(socket: Socket): { written: number; queued: number } {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle;
  return { written: socket.bytesWritten - socket.writableLength, queued: handle?.writeQueueSize ?? 0 };
}

/** How often busy connections are looked at: a tenth of the idle time, at most every second. */
const checkEvery = (idleTimeoutMs: number): number => Math.min(1000, idleTimeoutMs / 10);

/**
 * Wraps a server's request handler to keep count of each connection's responses, and closes a
 * connection whose responses have made no progress (no byte taken by the client, or none to send)
 * for `idleTimeoutMs`.
 *
 * Node's own socket timeout (`server.timeout`) is not used for this: when it fires while a write is
 * under way that the client took a part of since it began, it lets the write run a whole period more,
 * so a stalled client was cut between one and two periods after it stopped reading (120 s instead of
 * 60 s, holding an export slot and a dataset all the while).
 */
export function trackConnections(handler: RequestListener, idleTimeoutMs: number): RequestListener {
  const busy = new Set<Socket>();
  let sweep: NodeJS.Timeout | undefined;
  const check = () => {
    const now = performance.now();
    for (const socket of busy) {
      const connection = connections.get(socket)!;
      const { written, queued } = progressOf(socket);
      if (written !== connection.written || queued < connection.queued) {
        connection.progressAt = now;
      } else if (now - connection.progressAt >= idleTimeoutMs) {
        busy.delete(socket);
        socket.destroy();
      }
      connection.written = written;
      connection.queued = queued;
    }
    if (busy.size === 0) {
      clearInterval(sweep);
      sweep = undefined;
    }
  };

  return (request, response) => {
    const socket = request.socket;
    let connection = connections.get(socket);
    if (connection === undefined) {
      connection = { responses: 0, written: 0, queued: 0, progressAt: 0 };
      connections.set(socket, connection);
    }
    if (connection.responses++ === 0) {
      // Its progress is first read by the next check (a reading counts as progress): nothing to read per request.
      connection.written = -1;
      busy.add(socket);
      sweep ??= setInterval(check, checkEvery(idleTimeoutMs)).unref();
    }
    const tracked = connection;
    response.once('close', () => {
      if (--tracked.responses > 0) return;
      busy.delete(socket);
      tracked.last?.();
    });
    handler(request, response);
  };
}

/**
 * Runs `write` once every response under way on the connection has been handed to it (at once when
 * none is), so that an answer ending the connection comes after the answers to the requests before
 * it. Only the first call counts: the connection ends with it.
 */
export function afterResponsesUnderWay(socket: Socket, write: () => void): void {
  const connection = connections.get(socket);
  if (connection === undefined || connection.responses === 0) {
    write();
    return;
  }
  connection.last ??= write;
}
