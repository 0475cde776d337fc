/**
 * Fastify's own ceiling: one route answering every request with the same recorded response (status,
 * headers, body bytes), no logger and no plugins. Started by bench/hot-page.ts as
 *
 *   node bench/lib/minimal-fastify.ts <response.json> <port>
 *
 * where response.json is { status, headers, body (base64) }. Prints "ready" when it listens.
 */
import Fastify from 'fastify';
import { readRecordedResponse } from './recorded-response.ts';

const [file, port] = process.argv.slice(2);
const recorded = readRecordedResponse(file!);

const app = Fastify({ logger: false });
app.get('/*', (_request, reply) => {
  reply.code(recorded.status).headers(recorded.headers).send(recorded.status === 304 ? undefined : recorded.body);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
