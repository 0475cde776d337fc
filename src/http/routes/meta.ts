import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SERVER_PLACEHOLDER } from '../plugins/external/openapi.ts';
import { rootExample } from '../examples.ts';
import { sendJson } from '../reply.ts';
import packageJson from '../../../package.json' with { type: 'json' };
import { Root } from '../schemas.ts';

/** The version of HSDS this profile targets (the root object's `version`). */
const HSDS_VERSION = '3.0';

const packageVersion = packageJson.version;

const PROFILE_DOCUMENT = readFileSync(new URL('../../../docs/profile.md', import.meta.url), 'utf8');

const metaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: {
        tags: ['meta'],
        operationId: 'getAPIMetaInformation',
        summary: 'About this API and its relation to HSDS',
        response: { 200: { description: 'About this API, and the dataset version being served.', content: { 'application/json': { schema: Root, example: rootExample } } } },
      },
    },
    async (request, reply) => {
      const openapi = request.apiUrl('/openapi.json');
      const dataset = await request.store.info();
      return sendJson(
        reply,
        JSON.stringify({
          version: HSDS_VERSION,
          profile: request.apiUrl('/profile'),
          openapi_url: openapi,
          dataset: {
            version: dataset.version,
            published_at: dataset.publishedAt,
            organizations: dataset.organizations,
            taxonomies: dataset.taxonomies,
            taxonomy_terms: dataset.taxonomyTerms,
          },
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

  app.get(
    '/profile',
    {
      schema: {
        tags: ['meta'],
        operationId: 'getProfile',
        summary: 'The profile document: what this API includes and excludes of HSDS, and its rules',
        response: {
          200: {
            description: 'The profile, in Markdown.',
            content: { 'text/markdown': { schema: { type: 'string' }, example: PROFILE_DOCUMENT.slice(0, PROFILE_DOCUMENT.indexOf('\n\n')) } },
          },
        },
      },
    },
    async (_request, reply) => reply.type('text/markdown; charset=utf-8').send(PROFILE_DOCUMENT),
  );

  // Generated once, on first use (all routes exist by then); only the server URL varies per request.
  let openapiParts: string[] | undefined;
  const openapiSchema = {
    tags: ['meta'],
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI document',
    response: {
      200: {
        description: 'OpenAPI 3.1, with this server\'s URL.',
        content: { 'application/json': { schema: { type: 'object' }, example: { openapi: '3.1.0', info: { title: 'hsds-org-api', version: packageVersion }, paths: {} } } },
      },
    },
  };
  app.get('/openapi.json', { schema: openapiSchema }, async (request, reply) => {
    openapiParts ??= JSON.stringify(app.swagger()).split(JSON.stringify(SERVER_PLACEHOLDER));
    return sendJson(reply, openapiParts.join(JSON.stringify(request.apiUrl())));
  });
};

export default metaRoutes;
