/**
 * Fastify's own ceiling: one route answering every request with the same recorded response (status,
 * headers, body bytes), no logger and no plugins. Started by bench/hot-page.ts as
 *
 *   node bench/lib/minimal-fastify.ts <response.json> <port>
 *
 * where response.json is { status, headers, body (base64) }. Prints "ready" when it listens.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const [file, port] = process.argv.slice(2);
const recorded = JSON.parse(readFileSync(file!, 'utf8')) as RecordedResponse;
const body = Buffer.from(recorded.body, 'base64');

const app = Fastify({ logger: false });
app.get('/*', (_request, reply) => {
  reply.code(recorded.status).headers(recorded.headers).send(recorded.status === 304 ? undefined : body);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
