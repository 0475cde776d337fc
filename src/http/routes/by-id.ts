import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { TSchema } from 'typebox';
import { notFound } from '../plugins/app/problems.ts';
import { canonicalUuid, sendJson } from '../reply.ts';
import { problemExamples } from '../examples.ts';
import { HSDS_OPTIONAL, IdParams, problemResponse } from '../schemas.ts';
import type { Store } from '../../store/store.ts';

type TypeboxApp = Parameters<FastifyPluginAsyncTypebox>[0];

export interface ByIdRoute {
  url: string;
  operationId: string;
  summary: string;
  /** The response document's schema, and an example document. */
  schema: TSchema;
  example: { id: string };
  /** What is looked up, for the 404 wording, e.g. "published organization". */
  noun: string;
  find: (store: Store, id: string) => Promise<string | undefined>;
  /**
   * Resolves a native id given in place of the UUID. The answer is a permanent redirect to the
   * canonical URL, so caches hold one copy of each document.
   */
  findIdByNativeId?: (store: Store, nativeId: string) => Promise<string | undefined>;
}

/** A single-document route: a UUID in the path, the stored JSON, or a 404 (a malformed id too). */
export function getById(app: TypeboxApp, route: ByIdRoute): void {
  app.get(
    route.url,
    {
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: route.operationId,
        summary: route.summary,
        params: IdParams(route.example.id),
        response: {
          200: { description: `The ${route.noun}.`, content: { 'application/json': { schema: route.schema, example: route.example } } },
          ...(route.findIdByNativeId === undefined
            ? {}
            : {
                308: {
                  description: 'The path named a native id: `Location` is the canonical URL, by HSDS id.',
                  type: 'null',
                  headers: {
                    location: Type.String({
                      format: 'uri',
                      description: 'The canonical URL of the document, with the request\'s query.',
                      examples: [`https://api.example.org/api/hsds/v3${route.url.replace(':id', route.example.id)}`],
                    }),
                  },
                },
              }),
          404: problemResponse(`No ${route.noun} has this id (or the id is not a UUID).`, problemExamples.notFound(route.noun)),
        },
      },
    },
    async (request, reply) => {
      const id = canonicalUuid(request.params.id);
      if (id === undefined && route.findIdByNativeId !== undefined) {
        const canonicalId = await route.findIdByNativeId(request.store, request.params.id);
        if (canonicalId !== undefined) {
          const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
          return reply.redirect(`${request.apiUrl(route.url.replace(':id', canonicalId))}${query}`, 308);
        }
      }
      const document = id === undefined ? undefined : await route.find(request.store, id);
      if (document === undefined) return notFound(reply, `No ${route.noun} has id "${request.params.id}".`);
      return sendJson(reply, document);
    },
  );
}
