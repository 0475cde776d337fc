import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HSDS_VERSION } from '../../hsds/profile.ts';
import { rootExample } from '../examples.ts';
import { sendJson } from '../reply.ts';
import { HSDS_OPTIONAL, HSDS_REQUIRED, Root } from '../schemas.ts';
import type { RootDetails } from '../schemas.ts';
import { servedProfile } from './profile.ts';
import { DATAPACKAGE_PATH } from './datapackage.ts';

export interface MetaOptions {
  rootDetails: RootDetails;
}

const metaRoutes: FastifyPluginAsyncTypebox<MetaOptions> = async (app, options) => {
  app.get(
    '/',
    {
      schema: {
        tags: HSDS_REQUIRED,
        operationId: 'getAPIMetaInformation',
        summary: 'About this API and its relation to HSDS',
        response: { 200: { description: 'About this API, and the dataset version being served.', content: { 'application/json': { schema: Root, example: rootExample } } } },
      },
    },
    async (request, reply) => {
      const openapi = request.apiUrl('/openapi.json');
      const profile = request.apiUrl('/profile');
      const dataset = await request.store.info();
      return sendJson(
        reply,
        JSON.stringify({
          // "3.2.3" names the HSDS release; the validator Open Referral recommends cannot read it as a
          // number (only "3.0", "3.2"... are UK profile versions), so it follows openapi_url.
          version: HSDS_VERSION,
          profile,
          openapi_url: openapi,
          ...options.rootDetails,
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
            changes: `${request.apiUrl('/changes')}?since=${dataset.version}`,
            datapackage: request.apiUrl(DATAPACKAGE_PATH),
            openapi,
            profile,
            docs: request.apiUrl('/docs'),
            home: `${request.publicOrigin().replace(/\/+$/, '')}/`,
          },
        }),
      );
    },
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        'x-profile-extension': true,
        response: {
          200: {
            description: 'OpenAPI 3.1: the HSDS 3.2.3 OpenAPI file with this profile\'s patch applied, naming this server.',
            content: { 'application/json': { schema: { type: 'object' }, example: { openapi: '3.1.0', info: { title: 'hsds-org-api', version: '0.1.0' }, paths: {} } } },
          },
        },
      },
    },
    async (request, reply) => sendJson(reply, servedProfile(app).openapi.for(request)),
  );
};

export default metaRoutes;
