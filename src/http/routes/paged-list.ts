import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { TSchema } from 'typebox';
import { pageEnvelope, pagingOf, positionRange, rejectNonDecimalPaging } from '../pagination.ts';
import type { PagingQueryValues } from '../pagination.ts';
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
  /** Query parameters beyond `page` and `per_page`, and what their 400 means. */
  filters?: { parameters: Record<string, TSchema>; badRequest: string };
  /** One page of the (filtered) list; may throw a ParameterError for a bad filter value. */
  list: (store: Store, range: PositionRange, query: Record<string, unknown>) => Promise<Page>;
}

/** A list route: `page` and `per_page` (plus any filters), answered with the HSDS page envelope. */
export function getPagedList(app: TypeboxApp, route: PagedListRoute): void {
  app.get(
    route.url,
    {
      schema: {
        tags: route.tags,
        operationId: route.operationId,
        summary: route.summary,
        description: route.description,
        querystring: Type.Object({ ...PagingQuery, ...route.filters?.parameters }),
        response: {
          200: pageOf(route.itemSchemaId, `A page of ${route.tags[0]}.`),
          400: problemResponse(route.filters?.badRequest ?? 'A paging parameter is not an allowed integer.'),
        },
      },
      preValidation: rejectNonDecimalPaging,
    },
    async (request, reply) => {
      const query = request.query as PagingQueryValues & Record<string, unknown>;
      const paging = pagingOf(query);
      return sendJson(reply, pageEnvelope(request, paging, await route.list(request.store, positionRange(paging), query)));
    },
  );
}
