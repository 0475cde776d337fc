import Type from 'typebox';
import type { TSchema } from 'typebox';

/** Schemas of the HTTP layer: query parameters, the list envelope, problem bodies, the root object. */

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri-reference', description: 'Identifies the kind of problem; `about:blank` for plain HTTP errors.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    invalid_params: Type.Optional(
      Type.Array(Type.Object({ name: Type.String(), reason: Type.String() }), { description: 'For a bad query parameter: which one and why.' }),
    ),
  },
  { $id: 'Problem', title: 'RFC 9457 problem details' },
);

export const problemResponse = (description: string, example: unknown) => ({
  description,
  content: { 'application/problem+json': { schema: Type.Ref('Problem'), example } },
});

const Links = Type.Object(
  {
    self: Type.String({ format: 'uri' }),
    first: Type.String({ format: 'uri' }),
    last: Type.String({ format: 'uri' }),
    prev: Type.Optional(Type.String({ format: 'uri' })),
    next: Type.Optional(Type.String({ format: 'uri' })),
  },
  { description: 'Absolute URLs that keep the other query parameters of the request.' },
);

/** The HSDS page envelope around items of the `item` schema. */
export const pageOf = (item: TSchema): TSchema =>
  Type.Object(
    {
      total_items: Type.Integer({ description: 'Items in the whole list.' }),
      total_pages: Type.Integer({ description: 'Pages in the whole list; at least 1.' }),
      page_number: Type.Integer(),
      size: Type.Integer({ description: 'Items on this page.' }),
      first_page: Type.Boolean(),
      last_page: Type.Boolean(),
      empty: Type.Boolean({ description: 'True when this page has no items.' }),
      contents: Type.Array(item),
      links: Links,
    },
    { description: 'One page of the list, in the HSDS envelope, with links to other pages.' },
  );

export const Root = Type.Object({
  version: Type.String({ description: 'The HSDS version this profile targets.' }),
  profile: Type.String({ format: 'uri', description: 'This API\'s profile document.' }),
  openapi_url: Type.String({ format: 'uri', description: 'This API\'s OpenAPI document.' }),
  dataset: Type.Object(
    {
      version: Type.String({ description: 'Content hash of everything served; changes exactly when the data does.' }),
      published_at: Type.String({ format: 'date-time', description: 'When this version was published.' }),
      organizations: Type.Integer({ description: 'Published organizations.' }),
      taxonomies: Type.Integer(),
      taxonomy_terms: Type.Integer(),
    },
    { description: 'The dataset version being served.' },
  ),
  links: Type.Object({
    self: Type.String({ format: 'uri' }),
    organizations: Type.String({ format: 'uri' }),
    taxonomies: Type.String({ format: 'uri' }),
    taxonomy_terms: Type.String({ format: 'uri' }),
    openapi: Type.String({ format: 'uri' }),
  }),
});

export const IdParams = (example: string) => Type.Object({ id: Type.String({ description: 'The HSDS id (a UUID).', examples: [example] }) });
