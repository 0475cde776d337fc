/**
 * The runtime's ceiling: a bare node:http server that answers every request with the same recorded
 * response (status, headers, body bytes), doing nothing else. Started by bench/http.ts as
 *
 *   node bench/lib/baseline-server.ts <response.json> <port>
 *
 * where response.json is { status, headers, body (base64) }. Prints "ready" when it listens.
 */
import { createServer } from 'node:http';
import { readRecordedResponse } from './recorded-response.ts';

const [file, port] = process.argv.slice(2);
const recorded = readRecordedResponse(file!);

createServer((request, response) => {
  request.resume();
  response.writeHead(recorded.status, recorded.headers);
  response.end(recorded.body);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
