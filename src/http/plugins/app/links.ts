import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';

import { API_PREFIX } from '../../schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The absolute origin links are built on: the configured public base URL, else this request's. */
    publicOrigin(): string;
    /** An absolute URL under the API base, e.g. apiUrl('/organizations'). */
    apiUrl(path?: string): string;
  }
}

const FALLBACK_ORIGIN = 'http://localhost';

/**
 * The origin this request was addressed to. Host (and, behind a trusted proxy, X-Forwarded-*) are
 * client input: anything that is not a plain http(s) host[:port] falls back to localhost, so a link
 * is always a valid absolute URL.
 */
function requestOrigin(request: FastifyRequest): string {
  // request.protocol and request.host honour X-Forwarded-* only when trustProxy is on.
  return originOf(request.protocol === 'https' ? 'https' : 'http', request.host);
}

/** Origins of the last hosts seen, by protocol: a server is addressed by a few names, and parsing one is a URL parse per request. */
const origins = { http: new Map<string | undefined, string>(), https: new Map<string | undefined, string>() };
const ORIGINS_KEPT = 64;

/** The origin of a protocol and a Host header (see requestOrigin). */
export function originOf(protocol: 'http' | 'https', host: string | undefined): string {
  const known = origins[protocol];
  let origin = known.get(host);
  if (origin === undefined) {
    origin = FALLBACK_ORIGIN;
    try {
      const url = new URL(`${protocol}://${host}`);
      if (url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '') origin = url.origin;
    } catch {
      // not a valid host
    }
    if (known.size >= ORIGINS_KEPT) known.clear();
    known.set(host, origin);
  }
  return origin;
}

export interface LinksOptions {
  publicBaseUrl: string | undefined;
  /** Whether some proxy's X-Forwarded-* headers are believed (see trust-proxy.ts). */
  proxyTrusted: boolean;
}

/** The request headers links are built from behind a trusted proxy, unless a public base URL is set. */
export const FORWARDED_ORIGIN_HEADERS = 'X-Forwarded-Host, X-Forwarded-Proto';

export const FORWARDED_LINKS_WARNING =
  'links are built from X-Forwarded-Host and X-Forwarded-Proto (--trust-proxy without --public-base-url): responses say so in Vary, but a proxy that passes on a client\'s X-Forwarded-Host lets it choose the host in its links; set PUBLIC_BASE_URL to the public address';

export default fp<LinksOptions>(
  async (app, options) => {
    const configured = options.publicBaseUrl;
    if (configured === undefined && options.proxyTrusted) {
      app.log.warn(FORWARDED_LINKS_WARNING);
      // The Host is part of every cache's key, but these headers are not: a response whose links
      // come from them must say so, or an edge cache could hand one client's links to everyone.
      app.addHook('onRequest', async (_request, reply) => {
        reply.header('vary', FORWARDED_ORIGIN_HEADERS);
      });
    }
    app.decorateRequest('publicOrigin', function (this: FastifyRequest): string {
      return configured ?? requestOrigin(this);
    });
    app.decorateRequest('apiUrl', function (this: FastifyRequest, path = ''): string {
      return `${this.publicOrigin()}${API_PREFIX}${path}`;
    });
  },
  { name: 'links' },
);
