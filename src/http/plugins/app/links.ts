import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';

export const API_PREFIX = '/api/hsds/v3';

declare module 'fastify' {
  interface FastifyRequest {
    /** The absolute origin links are built on: the configured public base URL, else this request's. */
    publicOrigin(): string;
    /** An absolute URL under the API base, e.g. apiUrl('/organizations'). */
    apiUrl(path?: string): string;
  }
}

// A Host header is client input: anything but a plain host[:port] falls back to localhost.
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export interface LinksOptions {
  publicBaseUrl: string | undefined;
}

export default fp<LinksOptions>(
  async (app, options) => {
    const configured = options.publicBaseUrl;
    app.decorateRequest('publicOrigin', function (this: FastifyRequest): string {
      if (configured !== undefined) return configured;
      const host = PLAIN_HOST.test(this.host ?? '') ? this.host : 'localhost';
      // request.protocol and request.host honour X-Forwarded-* only when trustProxy is on.
      return `${this.protocol}://${host}`;
    });
    app.decorateRequest('apiUrl', function (this: FastifyRequest, path = ''): string {
      return `${this.publicOrigin()}${API_PREFIX}${path}`;
    });
  },
  { name: 'links' },
);
