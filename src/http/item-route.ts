import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { TSchema } from 'typebox';
import { notFound } from './problem.ts';
import { canonicalUuid, sendJson } from './reply.ts';
import { problemExamples } from './examples.ts';
import { HSDS_OPTIONAL, IdParams, problemResponse } from './schemas.ts';
import type { Store } from '../store/store.ts';

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
   * What else names the document in place of its UUID (a native id, a code). The answer is a
   * permanent redirect to the canonical URL, so caches hold one copy of each document.
   */
  nativeLookup?: NativeLookup;
}

export interface NativeLookup {
  /** What it is, after "id or" in a 404's detail, e.g. "native id". */
  noun: string;
  /** The path parameter's description: the UUID, and what else is accepted. */
  description: string;
  /** The HSDS id of the document the value names, or undefined when it names none. */
  find: (store: Store, value: string) => Promise<string | undefined>;
}

/**
 * A single-document route: a UUID in the path, the stored JSON, or a 404 (a malformed id too). With a
 * `nativeLookup`, a value that is not a UUID and names a document answers 308 to its canonical URL
 * (the request's query kept); one that names nothing is a 404 as well.
 */
export function getById(app: TypeboxApp, route: ByIdRoute): void {
  const native = route.nativeLookup;
  app.get(
    route.url,
    {
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: route.operationId,
        summary: route.summary,
        params: IdParams(route.example.id, native?.description),
        response: {
          200: { description: `The ${route.noun}.`, content: { 'application/json': { schema: route.schema, example: route.example } } },
          ...(native === undefined
            ? {}
            : {
                308: {
                  description: `The path named the ${route.noun} by ${native.noun}: \`Location\` is the canonical URL, by HSDS id.`,
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
          404: problemResponse(
            native === undefined ? `No ${route.noun} has this id (or the id is not a UUID).` : `No ${route.noun} has this id, nor this ${native.noun}.`,
            problemExamples.notFound(route.noun),
          ),
        },
      },
    },
    async (request, reply) => {
      const id = canonicalUuid(request.params.id);
      if (id === undefined && native !== undefined) {
        const canonicalId = await native.find(request.store, request.params.id);
        if (canonicalId !== undefined) {
          const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
          return reply.redirect(`${request.apiUrl(route.url.replace(':id', canonicalId))}${query}`, 308);
        }
        return notFound(reply, `No ${route.noun} has id or ${native.noun} "${request.params.id}".`);
      }
      const document = id === undefined ? undefined : await route.find(request.store, id);
      if (document === undefined) return notFound(reply, `No ${route.noun} has id "${request.params.id}".`);
      return sendJson(reply, document);
    },
  );
}
