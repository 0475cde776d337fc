/**
 * The runtime's ceiling: a bare node:http server that answers every request with the same recorded
 * response (status, headers, body bytes), doing nothing else. Started by bench/http.ts as
 *
 *   node bench/lib/baseline-server.ts <response.json> <port>
 *
 * where response.json is { status, headers, body (base64) }. Prints "ready" when it listens.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const [file, port] = process.argv.slice(2);
const recorded = JSON.parse(readFileSync(file!, 'utf8')) as RecordedResponse;
const body = Buffer.from(recorded.body, 'base64');

createServer((request, response) => {
  request.resume();
  response.writeHead(recorded.status, recorded.headers);
  response.end(body);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
