import { API_PREFIX } from '../http/schemas.ts';
import { DOCS_PATH } from '../http/plugins/external/docs.ts';

/** An address listened on, as a host in a URL: one listening on every interface is reached here as localhost. */
function urlHost(address: string | null | undefined): string {
  if (address === undefined || address === null || address === '' || address === '0.0.0.0' || address === '::') return 'localhost';
  return address.includes(':') ? `[${address}]` : address;
}

/** What `serve` prints once listening: where a person can look (the home page, the API root, its docs). */
export function servingMessage(address: string | null | undefined, port: number): string {
  const origin = `http://${urlHost(address)}:${port}`;
  return `Serving ${origin}/ — API ${origin}${API_PREFIX}/, docs ${origin}${DOCS_PATH}`;
}

/** What `serve` prints last when it stops on a signal (SIGTERM, SIGINT, or its starter gone). */
export const STOPPED_MESSAGE = 'Stopped.';
