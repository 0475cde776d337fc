import { pipeline } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';
import { compressBuffer, compressingStream, isCompressibleType } from '../../encoding.ts';

/** Below this many bytes an uncacheable body (an error, say) is sent as it is: compressing would not pay. */
const THRESHOLD = 1024;

export const isStream = (payload: unknown): payload is NodeJS.ReadableStream =>
  typeof payload === 'object' && payload !== null && typeof (payload as NodeJS.ReadableStream).pipe === 'function';

/** Adds Accept-Encoding to Vary, keeping whatever is there. */
export function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'Accept-Encoding');
  else if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(String(vary))) reply.header('vary', `${vary}, Accept-Encoding`);
}

/**
 * Compresses, in the coding chosen for the request (see codingFor in http-caching.ts), what the response cache did
 * not already send compressed: streamed lists, responses too large to keep, errors and the docs'
 * assets. A response with an ETag is always sent in that coding, because its ETag names the coding
 * (see http-caching); other bodies only from THRESHOLD bytes.
 */
export default fp(
  async (app) => {
    app.addHook('onSend', async (request, reply, payload) => {
      if (payload === null || payload === undefined || reply.statusCode === 204 || reply.statusCode === 304) return payload;
      if (!isCompressibleType(String(reply.getHeader('content-type') ?? ''))) return payload;
      varyOnEncoding(reply);
      if (reply.hasHeader('content-encoding')) return payload;
      const coding = request.contentCoding();
      if (coding === 'identity') return payload;
      if (isStream(payload)) {
        reply.header('content-encoding', coding).removeHeader('content-length');
        // Fastify destroys the returned stream when the client leaves; pipeline passes that on to the source.
        return pipeline(payload, compressingStream(coding), () => {});
      }
      const body = typeof payload === 'string' ? Buffer.from(payload) : (payload as Buffer);
      if (body.length < THRESHOLD && !reply.hasHeader('etag')) return payload;
      reply.header('content-encoding', coding);
      return compressBuffer(body, coding);
    });
  },
  { name: 'compression', dependencies: ['http-caching'] },
);
