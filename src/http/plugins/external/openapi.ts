import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import { SERVER_PLACEHOLDER } from '../../schemas.ts';
import { API_PREFIX } from '../../schemas.ts';
import packageJson from '../../../../package.json' with { type: 'json' };
import { HSDS_VERSION, officialFile } from '../../../hsds/profile.ts';

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from what is served.
 * Its `servers` entry is filled per request (see routes/meta.ts); SERVER_PLACEHOLDER only lets the
 * generator strip the API prefix from paths, as the HSDS OpenAPI file does.
 */

const official = officialFile('openapi.json');

type Document = Record<string, any>;

/**
 * Every parameter's examples as its schema's `examples` (JSON Schema 2020-12, as OpenAPI 3.1 has it),
 * where the generator made them the parameter's `example` or `examples`. Swagger UI fills the inputs
 * of "Try it out" with those two, and Execute sent every example as if typed (a search for `food
 * bank` went out with `page=2&format=ndjson&taxonomy_term_id=…`); the schema's it leaves alone.
 * Readers find the examples in the descriptions (documented, in query.ts).
 */
function withSchemaExamples<T extends Document>(document: T): T {
  for (const item of Object.values<Document>(document.paths ?? {})) {
    for (const operation of Object.values<Document>(item)) {
      for (const parameter of operation.parameters ?? []) {
        const examples = parameter.example !== undefined ? [parameter.example] : Object.values<Document>(parameter.examples ?? {}).map((example) => example.value);
        if (examples.length === 0 || parameter.schema === undefined) continue;
        delete parameter.example;
        delete parameter.examples;
        parameter.schema = { ...parameter.schema, examples };
      }
    }
  }
  return document;
}

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
      transformObject: (document) =>
        'openapiObject' in document ? withSchemaExamples({ ...document.openapiObject, jsonSchemaDialect: official.jsonSchemaDialect }) : document.swaggerObject,
      // The API root is registered without a trailing slash; OpenAPI paths must start with one.
      transform: ({ schema, url }) => ({ schema, url: url === API_PREFIX ? `${API_PREFIX}/` : url }),
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
      },
    });
  },
  { name: 'openapi' },
);
