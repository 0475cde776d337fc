import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SERVER_PLACEHOLDER } from '../plugins/external/openapi.ts';
import { sendJson } from '../reply.ts';
import { Root } from '../schemas.ts';

/** The version of HSDS this profile targets (the root object's `version`). */
export const HSDS_VERSION = '3.0';

const PROFILE_DOCUMENT = readFileSync(new URL('../../../docs/profile.md', import.meta.url), 'utf8');

const metaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: {
        tags: ['meta'],
        operationId: 'getAPIMetaInformation',
        summary: 'About this API and its relation to HSDS',
        response: { 200: Root },
      },
    },
    async (request, reply) => {
      const openapi = request.apiUrl('/openapi.json');
      return sendJson(
        reply,
        JSON.stringify({
          version: HSDS_VERSION,
          profile: request.apiUrl('/profile'),
          openapi_url: openapi,
          links: {
            self: request.apiUrl(),
            organizations: request.apiUrl('/organizations'),
            taxonomies: request.apiUrl('/taxonomies'),
            taxonomy_terms: request.apiUrl('/taxonomy_terms'),
            openapi,
          },
        }),
      );
    },
  );

  app.get('/profile', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').send(PROFILE_DOCUMENT),
  );

  // Generated once, on first use (all routes exist by then); only the server URL varies per request.
  let openapiParts: string[] | undefined;
  app.get('/openapi.json', { schema: { hide: true } }, async (request, reply) => {
    openapiParts ??= JSON.stringify(app.swagger()).split(JSON.stringify(SERVER_PLACEHOLDER));
    return sendJson(reply, openapiParts.join(JSON.stringify(request.apiUrl())));
  });
};

export default metaRoutes;
