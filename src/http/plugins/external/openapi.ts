import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import { API_PREFIX } from '../app/links.ts';
import packageJson from '../../../../package.json' with { type: 'json' };
import { HSDS_VERSION, officialFile } from '../../../hsds/profile.ts';

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from what is served.
 * Its `servers` entry is filled per request (see routes/meta.ts); this placeholder only lets the
 * generator strip the API prefix from paths, as the HSDS OpenAPI file does.
 */
export const SERVER_PLACEHOLDER = `http://server.invalid${API_PREFIX}`;

const official = officialFile('openapi.json');

export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'hsds-org-api',
          version: packageJson.version,
          summary: `Read-only HSDS ${HSDS_VERSION} API of organizations and taxonomies.`,
          description: `A partial profile of the Open Referral Human Services Data Specification (HSDS) ${HSDS_VERSION}: organizations, taxonomies and taxonomy terms, read-only. Only published organizations are served. Errors are RFC 9457 problem details. This document is the HSDS ${HSDS_VERSION} OpenAPI file (Open Referral, CC BY-SA 4.0) with the profile's merge patch applied (see /profile); what this profile adds is marked \`x-profile-extension\`.`,
          license: { name: 'MIT', identifier: 'MIT' },
        },
        servers: [{ url: SERVER_PLACEHOLDER }],
        // A public, read-only API: no operation needs credentials (stated, so tools need not guess).
        security: [],
        // HSDS's codelist api-endpoint-requirement, as the official file declares it.
        tags: official.tags,
      },
      // The official file's key the generator does not know.
      transformObject: (document) => ('openapiObject' in document ? { ...document.openapiObject, jsonSchemaDialect: official.jsonSchemaDialect } : document.swaggerObject),
      // The API root is registered without a trailing slash; OpenAPI paths must start with one.
      transform: ({ schema, url }) => ({ schema, url: url === API_PREFIX ? `${API_PREFIX}/` : url }),
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
      },
    });
  },
  { name: 'openapi' },
);
