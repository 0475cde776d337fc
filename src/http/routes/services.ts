import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { pagingOf, sendPage } from '../pagination.ts';
import { notFound } from '../problem.ts';
import { readQuery } from '../query.ts';
import { EMPTY, LIST_PARAMETERS, NDJSON_CONTENT_TYPE, ndjsonLines, noItems } from '../list-route.ts';
import { CSV_CONTENT_TYPE, csvLines, field } from '../csv.ts';

/**
 * HSDS requires every API to answer `/services` and `/services/{id}`. This profile has no services,
 * so its OpenAPI patch removes these paths; they are still answered, truthfully, for HSDS clients
 * and validators that go by the official OpenAPI file: an empty list, and no service by any id.
 * `/service_at_locations` likewise.
 */
const servicesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const [url, noun] of [
    ['/services', 'services'],
    ['/service_at_locations', 'service_at_locations'],
  ] as const) {
    app.get(url, { schema: { hide: true }, preValidation: readQuery(LIST_PARAMETERS) }, async (request, reply) => {
      if (request.parameters.format === 'ndjson') return reply.sendStream(NDJSON_CONTENT_TYPE, ndjsonLines(noItems()));
      if (request.parameters.format === 'csv') return reply.sendStream(CSV_CONTENT_TYPE, csvLines(['id', 'name'].map(field), noItems()));
      return sendPage(request, reply, pagingOf(request.parameters), EMPTY);
    });
    app.get(`${url}/:id`, { schema: { hide: true } }, async (request, reply) =>
      notFound(reply, `This API publishes organizations and taxonomies only: it has no ${noun} (see ${request.apiUrl('/profile')}).`),
    );
  }
};

export default servicesRoutes;
