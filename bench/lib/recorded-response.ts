import { readFileSync } from 'node:fs';

/** A response as a bench recorded it (bench/hot-page.ts, bench/http.ts), to be sent again by a ceiling server. */
export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  /** Base64 of the body bytes as sent (compressed, if they were). */
  body: string;
}

/** The recorded response in `file` (JSON), with its body as bytes. */
export function readRecordedResponse(file: string): { status: number; headers: Record<string, string>; body: Buffer } {
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as RecordedResponse;
  return { status: recorded.status, headers: recorded.headers, body: Buffer.from(recorded.body, 'base64') };
}
