import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { pageEnvelope, pagingOf, positionRange, rejectNonDecimalPaging } from '../pagination.ts';
import { sendJson } from '../reply.ts';
import { PagingQuery, pageOf, problemResponse } from '../schemas.ts';
import type { Page, PositionRange, Store } from '../../store/store.ts';

type TypeboxApp = Parameters<FastifyPluginAsyncTypebox>[0];

export interface PagedListRoute {
  url: string;
  tags: string[];
  operationId: string;
  summary: string;
  description: string;
  /** `$id` of the item schema. */
  itemSchemaId: string;
  list: (store: Store, range: PositionRange) => Promise<Page>;
}

/** A list route whose only parameters are `page` and `per_page`. */
export function getPagedList(app: TypeboxApp, route: PagedListRoute): void {
  app.get(
    route.url,
    {
      schema: {
        tags: route.tags,
        operationId: route.operationId,
        summary: route.summary,
        description: route.description,
        querystring: Type.Object(PagingQuery),
        response: {
          200: pageOf(route.itemSchemaId, `A page of ${route.tags[0]}.`),
          400: problemResponse('A paging parameter is not an allowed integer.'),
        },
      },
      preValidation: rejectNonDecimalPaging,
    },
    async (request, reply) => {
      const paging = pagingOf(request.query);
      return sendJson(reply, pageEnvelope(request, paging, await route.list(app.store, positionRange(paging))));
    },
  );
}
