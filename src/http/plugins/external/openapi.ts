import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import { API_PREFIX } from '../app/links.ts';
import packageJson from '../../../../package.json' with { type: 'json' };

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from what is served.
 * Its `servers` entry is filled per request (see routes/meta.ts); this placeholder only lets the
 * generator strip the API prefix from paths, as the HSDS OpenAPI file does.
 */
export const SERVER_PLACEHOLDER = `http://server.invalid${API_PREFIX}`;

export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'hsds-org-api',
          version: packageJson.version,
          summary: 'Read-only HSDS 3.0 API of organizations and taxonomies.',
          description:
            'A partial profile of the Open Referral Human Services Data Specification (HSDS) 3.0: organizations, taxonomies and taxonomy terms, read-only. Only published organizations are served. Errors are RFC 9457 problem details.',
          license: { name: 'MIT', identifier: 'MIT' },
        },
        servers: [{ url: SERVER_PLACEHOLDER }],
        // A public, read-only API: no operation needs credentials (stated, so tools need not guess).
        security: [],
        tags: [
          { name: 'meta', description: 'About this API.' },
          { name: 'organizations', description: 'Published organizations.' },
          { name: 'taxonomies', description: 'Taxonomies.' },
          { name: 'taxonomy_terms', description: 'Terms of the taxonomies.' },
        ],
      },
      // The API root is registered without a trailing slash; OpenAPI paths must start with one.
      transform: ({ schema, url }) => ({ schema, url: url === API_PREFIX ? `${API_PREFIX}/` : url }),
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
      },
    });
  },
  { name: 'openapi' },
);
