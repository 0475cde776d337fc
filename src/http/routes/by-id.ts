import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { notFound } from '../plugins/app/problems.ts';
import { canonicalUuid, sendJson } from '../reply.ts';
import { IdParams, problemResponse } from '../schemas.ts';
import type { Store } from '../../store/store.ts';

type TypeboxApp = Parameters<FastifyPluginAsyncTypebox>[0];

export interface ByIdRoute {
  url: string;
  tags: string[];
  operationId: string;
  summary: string;
  /** `$id` of the response document schema. */
  schemaId: string;
  /** What is looked up, for the 404 wording, e.g. "published organization". */
  noun: string;
  find: (store: Store, id: string) => Promise<string | undefined>;
}

/** A single-document route: a UUID in the path, the stored JSON, or a 404 (a malformed id too). */
export function getById(app: TypeboxApp, route: ByIdRoute): void {
  app.get(
    route.url,
    {
      schema: {
        tags: route.tags,
        operationId: route.operationId,
        summary: route.summary,
        params: IdParams,
        response: {
          200: Type.Ref(route.schemaId),
          404: problemResponse(`No ${route.noun} has this id (or the id is not a UUID).`),
        },
      },
    },
    async (request, reply) => {
      const id = canonicalUuid(request.params.id);
      const document = id === undefined ? undefined : await route.find(request.store, id);
      if (document === undefined) return notFound(reply, `No ${route.noun} has id "${request.params.id}".`);
      return sendJson(reply, document);
    },
  );
}
