import Type from 'typebox';
import type { TSchema } from 'typebox';
import { officialFile } from '../hsds/profile.ts';
import { documented } from './query.ts';

/** Schemas of the HTTP layer: query parameters, the list envelope, problem bodies, the root object. */

/**
 * The tags of HSDS 3.2's codelist api-endpoint-requirement, which the official OpenAPI file puts on
 * every operation: only `/`, `/services` and `/services/{id}` are required; the validator Open
 * Referral recommends treats a failing optional endpoint as a warning.
 */
export const HSDS_REQUIRED = ['required'];
export const HSDS_OPTIONAL = ['optional'];

/** Where the API is served: every path of it begins so (HSDS 3's base path). */
export const API_PREFIX = '/api/hsds/v3';

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
  { description: 'Profile addition: absolute URLs of this page and the others, keeping the other query parameters of the request.', 'x-profile-extension': true },
);

/** HSDS 3.2.3's page envelope (`#/components/schemas/Page`), as the official OpenAPI file has it. */
export const Page = { $id: 'Page', ...officialFile('openapi.json').components.schemas.Page };

/** The API's base URL in documents made once (the OpenAPI document, the profile): each answer puts its own origin there. */
export const SERVER_PLACEHOLDER = `http://server.invalid${API_PREFIX}`;

/** Where the compiled profile schemas are served, as the OpenAPI document names them (see profile.ts). */
export const PROFILE_SCHEMA_BASE = `${SERVER_PLACEHOLDER}/profile/schema/`;

/** A reference to a compiled profile schema, e.g. `organization.json`. */
export const profileSchema = (file: string, options: { description?: string } = {}): TSchema => Type.Unsafe({ $ref: `${PROFILE_SCHEMA_BASE}${file}`, ...options });

/**
 * A page of `item`s in HSDS 3.2.3's form (`allOf` the Page and its `contents`), with every envelope
 * field this API always sends required, and `links`; `extensions` are the route's own optional fields.
 */
/** Envelope fields a search of organizations may add (profile additions). */
export const SEARCH_PAGE_FIELDS: Record<string, TSchema> = {
  search_suggestion: Type.Optional(
    Type.String({
      description:
        'Profile addition, only when no organization holds every word of a `search` (the page is empty, or holds partial matches only): the same search with each word no name holds replaced by the closest word that one does, when that finds something under the same filters. Ask again with it as `search` to see what it finds.',
      'x-profile-extension': true,
    }),
  ),
  search_categories: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid', description: 'The term.' }),
        code: Type.String({ description: "The term's code." }),
        name: Type.String({ description: "The term's name." }),
        taxonomy: Type.String({ description: "The code of the term's taxonomy." }),
      }),
      {
        description:
          'Profile addition, only when a `search` names categories and organizations in them follow its name matches: the taxonomy terms its words were read as (from the terms\' names and a list of the everyday words people use for them). The organizations classified under them or a term below them (at most 1,000), within the other filters, follow those whose text holds every word, in place of those holding only some.',
        'x-profile-extension': true,
      },
    ),
  ),
  facets: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Array(
        Type.Object({
          id: Type.Optional(Type.String({ format: 'uuid', description: 'The term (taxonomy facets).' })),
          code: Type.Optional(Type.String({ description: 'The term\'s code (taxonomy facets).' })),
          name: Type.Optional(Type.String({ description: 'The term\'s name (taxonomy facets).' })),
          value: Type.Optional(Type.String({ description: 'The tax status (`tax_status`).' })),
          count: Type.Integer({ minimum: 1, description: 'Organizations of the whole filtered list (not only this page) with this value.' }),
        }),
      ),
      {
        description:
          'Profile addition, with `facets=`: per facet asked for (`tax_status`, or `<taxonomy code>:<depth>`), the values the filtered list\'s organizations have, most organizations first. An organization tagged under two terms of one depth counts under both.',
        'x-profile-extension': true,
      },
    ),
  ),
};

export const pageOf = (item: TSchema, extensions: Record<string, TSchema> = {}): TSchema =>
  Type.Unsafe({
    description: 'One page of the list, in the HSDS envelope, with links to other pages.',
    allOf: [
      Type.Ref('Page'),
      {
        type: 'object',
        properties: {
          contents: Type.Array(item),
          links: Links,
          ...extensions,
        },
        // HSDS requires `empty` and `contents`; this API always sends the whole envelope.
        required: ['contents', 'links', 'total_items', 'total_pages', 'page_number', 'size', 'first_page', 'last_page', 'empty'],
      },
    ],
  });

/** What the operator says about this feed in the root object (HSDS 3.2's optional root fields). */
export interface RootDetails {
  description?: string;
  data_guide?: string;
  publisher?: { name?: string; identifier?: string; email?: string; website?: string; additional_websites?: string[] };
}

const extension = { 'x-profile-extension': true };

export const Root = Type.Object({
  version: Type.String({ description: 'The HSDS version this API implements a profile of.' }),
  profile: Type.String({ format: 'uri', description: 'This API\'s HSDS profile: a page for people, JSON for programs, with its merge patches and compiled schemas.' }),
  openapi_url: Type.String({ format: 'uri', description: 'This API\'s OpenAPI document: the HSDS 3.2.3 one with the profile\'s patch applied.' }),
  description: Type.Optional(Type.String({ description: 'What this feed is, as its operator says (absent when not set).' })),
  data_guide: Type.Optional(Type.String({ format: 'uri', description: 'A page explaining this dataset to people (absent when not set).' })),
  publisher: Type.Optional(
    Type.Object(
      {
        name: Type.Optional(Type.String()),
        identifier: Type.Optional(Type.String({ description: 'An org-id.guide identifier, e.g. `US-EIN-530196605`.' })),
        email: Type.Optional(Type.String({ format: 'email' })),
        website: Type.Optional(Type.String({ format: 'uri' })),
        additional_websites: Type.Optional(Type.Array(Type.String({ format: 'uri' }))),
      },
      { description: 'Who publishes this feed, as its operator says (absent when not set).' },
    ),
  ),
  dataset: Type.Object(
    {
      version: Type.String({ description: 'Content hash of everything served; changes exactly when the data does.' }),
      published_at: Type.String({ format: 'date-time', description: 'When this version was published.' }),
      organizations: Type.Integer({ description: 'Published organizations.' }),
      taxonomies: Type.Integer(),
      taxonomy_terms: Type.Integer(),
    },
    { description: 'Profile addition: the dataset version being served.', ...extension },
  ),
  links: Type.Object(
    {
      self: Type.String({ format: 'uri' }),
      organizations: Type.String({ format: 'uri' }),
      taxonomies: Type.String({ format: 'uri' }),
      taxonomy_terms: Type.String({ format: 'uri' }),
      changes: Type.String({ format: 'uri', description: 'The changes feed from this version: ask it later to learn what changed since (see `/changes`).' }),
      datapackage: Type.String({ format: 'uri', description: 'The whole dataset as an HSDS tabular data package (a ZIP of CSV files and datapackage.json), for HSDS tools and for `import`.' }),
      openapi: Type.String({ format: 'uri' }),
      profile: Type.String({ format: 'uri' }),
      docs: Type.String({ format: 'uri' }),
      home: Type.String({ format: 'uri', description: 'The home page for people: the same data as pages.' }),
    },
    { description: 'Profile addition: where to go from here.', ...extension },
  ),
});

export const IdParams = (example: string, description = 'The HSDS id (a UUID).') => Type.Object({ id: Type.String(documented(description, [example])) });
