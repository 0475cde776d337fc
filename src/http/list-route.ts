import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { PAGING_PARAMETERS, pagingOf, positionRange, sendPage } from './pagination.ts';
import { choiceParameter, querySchema, readQuery } from './query.ts';
import type { QueryParameters } from './query.ts';
import { pageExample, problemExamples } from './examples.ts';
import { CSV_CONTENT_TYPE, csvLines } from './csv.ts';
import type { CsvColumn } from './csv.ts';
import { HSDS_OPTIONAL, pageOf, problemResponse } from './schemas.ts';
import type { Batches, Page, PositionRange, Store } from '../store/store.ts';

type TypeboxApp = Parameters<FastifyPluginAsyncTypebox>[0];

export const NDJSON_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';

/** The parameters every list takes: paging and `format`. */
export const LIST_PARAMETERS = {
  ...PAGING_PARAMETERS,
  format: choiceParameter(
    ['json', 'ndjson', 'csv'],
    'json',
    '`json`: one page in the HSDS envelope. `ndjson`: every matching item, without pagination (`page` and `per_page` do not apply, though a value given must still be valid), one JSON object per line, streamed (`application/x-ndjson`). `csv`: every matching item the same way, as CSV (RFC 4180, UTF-8, a header row; `text/csv`), with the columns the profile lists; a text starting with `=`, `+`, `-`, `@`, a tab or a carriage return is written after a single quote, so that no spreadsheet runs it as a formula.',
  ),
};

export interface ListRoute<Filter> {
  url: string;
  operationId: string;
  summary: string;
  description: string;
  /** The schema of one item, as listed, and an example item. */
  item: TSchema;
  example: unknown;
  /** Fields of the page envelope beyond HSDS's and `links`, if the route sends any. */
  pageFields?: Record<string, TSchema>;
  /** Query parameters beyond paging and `format`. */
  parameters: QueryParameters;
  /** What a 400 can mean on this route. */
  badRequest: string;
  /**
   * The filter the read parameters ask for; may throw a ParameterError (say, for a code that names
   * nothing). Undefined when it can match nothing at all.
   */
  filter: (store: Store, parameters: Record<string, unknown>) => Promise<Filter | undefined>;
  page: (store: Store, filter: Filter, range: PositionRange, parameters: Record<string, unknown>) => Promise<Page>;
  all: (store: Store, filter: Filter, parameters: Record<string, unknown>) => Batches;
  /** The columns of `format=csv`. */
  csvColumns: readonly CsvColumn[];
}

export const EMPTY: Page = { total: 0, items: [] };

/** A `format` that streams every matching item rather than a page. */
const isExport = (format: unknown): boolean => format === 'ndjson' || format === 'csv';

export async function* noItems(): Batches {}

export async function* ndjsonLines(batches: Batches): AsyncGenerator<string> {
  for await (const batch of batches) yield `${batch.join('\n')}\n`;
}

/** A list route: paging and `format`, plus the route's filters; the HSDS envelope, or NDJSON. */
export function getList<Filter>(app: TypeboxApp, route: ListRoute<Filter>): void {
  const parameters = { ...LIST_PARAMETERS, ...route.parameters };
  app.get(
    route.url,
    {
      config: { streamed: (query) => isExport(query.format) },
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: route.operationId,
        summary: route.summary,
        description: route.description,
        querystring: querySchema(parameters),
        response: {
          200: {
            description: `A page of ${route.url.slice(1)} (\`format=json\`, the default), or all of them (\`format=ndjson\` or \`csv\`).`,
            headers: {
              Link: {
                type: 'string',
                description: 'With `format=json`: the page\'s `links` as RFC 8288 links, `<url>; rel="self"`, `first`, `last`, and `prev` and `next` where they exist.',
              },
            },
            content: {
              'application/json': { schema: pageOf(route.item, route.pageFields), example: pageExample(route.url, [route.example]) },
              'application/x-ndjson': { schema: route.item, example: route.example },
              'text/csv': {
                schema: { type: 'string', description: `Columns: ${route.csvColumns.map((column) => `\`${column.name}\``).join(', ')}.` },
                example: `${route.csvColumns.map((column) => column.name).join(',')}\r\n`,
              },
            },
          },
          400: problemResponse(route.badRequest, problemExamples.badParameter),
        },
      },
      preValidation: readQuery(parameters),
    },
    async (request, reply) => {
      const values = request.parameters;
      const filter = await route.filter(request.store, values);
      if (isExport(values.format)) {
        // HEAD gets the headers without the work: Fastify would read a real stream to its end.
        const all = filter === undefined || request.method === 'HEAD' ? noItems() : route.all(request.store, filter, values);
        if (values.format === 'ndjson') return reply.sendStream(NDJSON_CONTENT_TYPE, ndjsonLines(all));
        return reply.sendStream(CSV_CONTENT_TYPE, csvLines(route.csvColumns, all));
      }
      const paging = pagingOf(values);
      const page = filter === undefined ? EMPTY : await route.page(request.store, filter, positionRange(paging), values);
      return sendPage(request, reply, paging, page);
    },
  );
}
