import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Negotiator from 'negotiator';
import { HSDS_VERSION, PROFILE_VERSION, UPSTREAM_HOME, UPSTREAM_SCHEMA_BASE, compileProfile } from '../../hsds/profile.ts';
import { notFound } from '../problem.ts';
import { SERVER_PLACEHOLDER } from '../schemas.ts';
import { PAGE_SECURITY_POLICY } from '../html.ts';
import { profilePage } from '../profile-page.ts';
import { sendJson } from '../reply.ts';
import { HSDS_OPTIONAL, PROFILE_SCHEMA_BASE, problemResponse } from '../schemas.ts';
import { choiceParameter, querySchema, readQuery } from '../query.ts';
import { problemExamples } from '../examples.ts';

/** The profile's source text, for people: served as Markdown, and as HTML made from it. */
const PROFILE_TEXT = readFileSync(new URL('../../../docs/profile.md', import.meta.url), 'utf8');

const PROFILE_PATH = '/profile';

/** A text made once with the placeholder server URL, sent with the request's own. */
class ServerRelativeText {
  private readonly parts: string[];
  constructor(text: string) {
    this.parts = text.split(SERVER_PLACEHOLDER);
  }
  for(request: FastifyRequest): string {
    return this.parts.join(request.apiUrl());
  }
}

const jsonText = (value: unknown) => new ServerRelativeText(JSON.stringify(value));

export interface ServedProfile {
  openapi: ServerRelativeText;
  /** The files under the profile URI: the patches by file name, the compiled files under `schema/`. */
  files: Map<string, ServerRelativeText>;
  description: ServerRelativeText;
  page: ServerRelativeText;
}

// By server: the routes of one app, in whatever plugin context, share it.
const profiles = new WeakMap<object, ServedProfile>();

/**
 * The profile of this app, compiled on first use, when every route (and so the generated OpenAPI
 * document) exists. Every URL in it names this server as the request addressed it.
 */
export function servedProfile(app: FastifyInstance): ServedProfile {
  let profile = profiles.get(app.server);
  if (profile === undefined) {
    const { patches, compiled } = compileProfile(app.swagger(), PROFILE_SCHEMA_BASE);
    const base = `${SERVER_PLACEHOLDER}${PROFILE_PATH}`;
    const description = {
      name: 'hsds-org-api',
      title: 'Organizations and taxonomies, read-only: a profile of HSDS 3.2.3',
      version: PROFILE_VERSION,
      hsds_version: HSDS_VERSION,
      uri: base,
      description: firstParagraph(PROFILE_TEXT),
      base_schema: UPSTREAM_HOME,
      base_schema_refs: UPSTREAM_SCHEMA_BASE,
      modifications: Object.fromEntries([...patches.keys()].map((file) => [file, `${base}/${file}`])),
      schema: Object.fromEntries([...compiled.keys()].map((file) => [file, `${base}/schema/${file}`])),
      documentation: { html: `${base}?format=html`, markdown: `${base}?format=markdown` },
    };
    profile = {
      openapi: jsonText(compiled.get('openapi.json')),
      files: new Map([
        ...[...patches].map(([file, patch]) => [file, jsonText(patch)] as const),
        ...[...compiled].map(([file, schema]) => [`schema/${file}`, jsonText(schema)] as const),
      ]),
      description: jsonText(description),
      page: new ServerRelativeText(profilePage(PROFILE_TEXT, description, SERVER_PLACEHOLDER)),
    };
    profiles.set(app.server, profile);
  }
  return profile;
}

const firstParagraph = (markdown: string): string =>
  markdown
    .split(/\n\s*\n/)
    .find((block) => !block.startsWith('#'))!
    .replace(/\s+/g, ' ')
    .replace(/\*\*|`/g, '')
    .trim();

const FORMATS = ['json', 'html', 'markdown'] as const;
type Format = (typeof FORMATS)[number];
const MEDIA_TYPES: Record<string, Format> = { 'application/json': 'json', 'text/html': 'html', 'text/markdown': 'markdown' };

const PROFILE_PARAMETERS = {
  format: choiceParameter(
    FORMATS,
    // Without it the Accept header decides.
    undefined,
    'Overrides the Accept header: `json` (what a program gets by default), `html` (what a browser gets) or `markdown` (the source text of the page).',
  ),
};

/** `format` wins; else the Accept header (a browser gets HTML); else JSON. Read before the query is (for the caches). */
function formatOf(request: FastifyRequest): Format {
  const asked = (request.query as Record<string, unknown>).format;
  if (typeof asked === 'string' && (FORMATS as readonly string[]).includes(asked)) return asked as Format;
  const preferred = new Negotiator({ headers: { accept: request.headers.accept ?? '*/*' } }).mediaType(Object.keys(MEDIA_TYPES));
  return MEDIA_TYPES[preferred ?? 'application/json'] ?? 'json';
}

// The page's only styles are inline; it runs no script and loads nothing (its icon is an empty data: URL).

function sendProfile(request: FastifyRequest, reply: FastifyReply, profile: ServedProfile): FastifyReply {
  switch (formatOf(request)) {
    case 'html':
      return reply.type('text/html; charset=utf-8').header('content-security-policy', PAGE_SECURITY_POLICY).send(profile.page.for(request));
    case 'markdown':
      return reply.type('text/markdown; charset=utf-8').send(PROFILE_TEXT);
    case 'json':
      return sendJson(reply, profile.description.for(request));
  }
}

const profileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    PROFILE_PATH,
    {
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: 'getProfile',
        summary: 'This API\'s HSDS profile: what it includes and excludes of HSDS 3.2.3, its rules, its merge patches and compiled schemas',
        'x-profile-extension': true,
        querystring: querySchema(PROFILE_PARAMETERS),
        response: {
          200: {
            description: 'The profile: a JSON description naming its files, or the document for people (HTML or Markdown), as Accept or `format` asks.',
            content: {
              'application/json': {
                schema: { type: 'object' },
                example: { name: 'hsds-org-api', version: PROFILE_VERSION, hsds_version: HSDS_VERSION, uri: 'https://api.example.org/api/hsds/v3/profile' },
              },
              'text/html': { schema: { type: 'string' }, example: '<!doctype html>' },
              'text/markdown': { schema: { type: 'string' }, example: PROFILE_TEXT.slice(0, PROFILE_TEXT.indexOf('\n\n')) },
            },
          },
          400: problemResponse('`format` is not one of json, html, markdown.', problemExamples.badParameter),
        },
      },
      preValidation: readQuery(PROFILE_PARAMETERS),
      config: { representation: { vary: 'Accept', of: formatOf } },
    },
    async (request, reply) => sendProfile(request, reply, servedProfile(app)),
  );

  app.get(
    `${PROFILE_PATH}/*`,
    {
      // Files, not operations: the profile's description lists them (an OpenAPI path template of
      // files would have validators look for ids to fill it with).
      schema: { hide: true },
    },
    async (request, reply) => {
      const name = (request.params as { '*': string })['*'];
      const file = servedProfile(app).files.get(name);
      if (file === undefined) return notFound(reply, `The profile has no file "${name}"; its description (${request.apiUrl(PROFILE_PATH)}) lists them.`);
      return sendJson(reply, file.for(request));
    },
  );
};

export default profileRoutes;
