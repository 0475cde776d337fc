import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { TSchema } from 'typebox';
import { KEPT_VERSIONS } from '../../store/tables.ts';
import type { Changes, DatasetVersion, Store } from '../../store/store.ts';
import { examples, problemExamples } from '../examples.ts';
import { sendProblem } from '../problem.ts';
import { sendJson } from '../reply.ts';
import { documented, fail, querySchema, readQuery } from '../query.ts';
import type { QueryParameter } from '../query.ts';
import { HSDS_OPTIONAL, profileSchema, problemResponse } from '../schemas.ts';
import { NDJSON_CONTENT_TYPE, ndjsonLines, noItems } from '../list-route.ts';

/**
 * The changes feed: what a copy of the organizations (and taxonomies) needs to become the live
 * dataset, from a version it holds. One NDJSON line per change, each `{"type": T, T: object}`:
 * first a `changes` line saying from which version to which and how many changes follow; then, when
 * the taxonomies and terms differ, every `taxonomy` and every `taxonomy_term`; every organization
 * removed (`removed_organization`); every organization added or changed (`organization`, the full
 * document); last an `end` line. Without `end`, the feed was cut short and should not be applied.
 * `since=0` is the feed from nothing: everything. Without `since`, the path answers a small JSON
 * document naming the versions kept and their feeds (a client, a crawler or a validator that asks for
 * the bare path gets that, not the whole dataset).
 */

const VERSION = /^[0-9a-f]{16}$/;
/** `since` of a client that holds nothing. */
const NOTHING = '0';

const sinceParameter: QueryParameter<string> = {
  schema: Type.Optional(
    Type.String({
      pattern: `^(${NOTHING}|${VERSION.source.slice(1, -1)})$`,
      ...documented(
        `A dataset version this client holds (\`dataset.version\` of the API root, or \`version\` of the feed's \`changes\` line), or \`${NOTHING}\` for everything, as if the client held nothing. The server keeps the changes since each of the last ${KEPT_VERSIONS} versions it published; an older one (or one it never published) is a \`410\`. Left out: the versions kept, as JSON.`,
        ['032ae266ba64c02d', NOTHING],
      ),
    }),
  ),
  read(raw) {
    const value = raw.trim();
    return VERSION.test(value) || value === NOTHING ? value : fail(`must be a dataset version (16 hexadecimal digits, as dataset.version of the API root gives) or ${NOTHING} for everything`);
  },
};

const KeptVersions = Type.Object(
  {
    version: Type.String({ description: 'The live dataset version.' }),
    published_at: Type.String({ format: 'date-time' }),
    versions: Type.Array(
      Type.Object({ version: Type.String(), published_at: Type.String({ format: 'date-time' }), changes: Type.String({ format: 'uri', description: 'The feed of the changes since this version.' }) }),
      { description: `The versions whose changes are kept, newest (the live one) first: at most ${KEPT_VERSIONS}.` },
    ),
    links: Type.Object({ self: Type.String({ format: 'uri' }), everything: Type.String({ format: 'uri', description: `The feed from nothing (\`since=${NOTHING}\`): a full copy.` }) }),
  },
  { description: 'Without `since`: what can be asked for.' },
);

const PARAMETERS = { since: sinceParameter };

const versionFields = (version: DatasetVersion) => ({ version: version.version, published_at: version.publishedAt });

const line = (type: string, object: unknown): string => `${JSON.stringify({ type, [type]: object })}\n`;

/** Stored JSON, each wrapped as a line of `type`, without parsing it. */
const lines = (type: string, objects: readonly string[]): string => objects.map((json) => `{"type":"${type}","${type}":${json}}\n`).join('');

async function* changeLines(store: Store, changes: Changes): AsyncGenerator<string> {
  yield line('changes', {
    since: changes.since === undefined ? null : versionFields(changes.since),
    ...versionFields(changes.version),
    taxonomies_changed: changes.taxonomiesChanged,
    organizations_changed: changes.changedCount,
    organizations_removed: changes.removedCount,
  });
  if (changes.taxonomiesChanged) {
    for await (const batch of store.allTaxonomies({})) yield lines('taxonomy', batch);
    for await (const batch of store.allTaxonomyTerms({})) yield lines('taxonomy_term', batch);
  }
  for await (const batch of changes.removed) yield lines('removed_organization', batch);
  for await (const batch of changes.changed) yield lines('organization', batch);
  yield line('end', versionFields(changes.version));
}

const wrapped = (type: string, schema: TSchema, description: string) =>
  Type.Object({ type: Type.Literal(type), [type]: schema }, { description, additionalProperties: false });

const VersionRef = Type.Object({ version: Type.String(), published_at: Type.String({ format: 'date-time' }) });

const LINE_SCHEMA = Type.Union([
  wrapped(
    'changes',
    Type.Object({
      since: Type.Union([VersionRef, Type.Null()], { description: 'The version asked about; null for `since=0`.' }),
      version: Type.String({ description: 'The version the feed brings a copy to: keep it for the next request.' }),
      published_at: Type.String({ format: 'date-time' }),
      taxonomies_changed: Type.Boolean({ description: 'Whether every taxonomy and term follows (they differ from those of `since`): replace yours with them.' }),
      organizations_changed: Type.Integer({ description: 'How many `organization` lines follow.' }),
      organizations_removed: Type.Integer({ description: 'How many `removed_organization` lines follow.' }),
    }),
    'The first line.',
  ),
  wrapped('taxonomy', profileSchema('taxonomy.json'), 'A taxonomy, as `/taxonomies` lists it (all of them, when `taxonomies_changed`).'),
  wrapped('taxonomy_term', profileSchema('taxonomy_term.json'), 'A term, as `/taxonomy_terms` lists it (all of them, when `taxonomies_changed`).'),
  wrapped(
    'removed_organization',
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      external_identifier: Type.String(),
      removed_at: Type.String({ format: 'date-time', description: 'The publish time of the first version without it.' }),
    }),
    'An organization the client may hold that is no longer published: delete it.',
  ),
  wrapped('organization', profileSchema('organization.json'), 'An organization added or changed since `since`, as `/organizations/{id}` serves it: add it, or replace yours.'),
  wrapped('end', VersionRef, 'The last line: the feed is whole.'),
]);

/** One example of each kind of line. */
const LINE_EXAMPLES = {
  changes: { type: 'changes', changes: { since: { version: '032ae266ba64c02d', published_at: '2026-11-01T09:00:00.000Z' }, version: '5d1c0a9e7b3f2846', published_at: '2026-11-02T09:00:00.000Z', taxonomies_changed: false, organizations_changed: 1, organizations_removed: 1 } },
  removed_organization: { type: 'removed_organization', removed_organization: { id: '3f0c1e9a-0000-5000-8000-000000000000', external_identifier: '990000009', removed_at: '2026-11-02T09:00:00.000Z' } },
  organization: { type: 'organization', organization: examples.organization },
  end: { type: 'end', end: { version: '5d1c0a9e7b3f2846', published_at: '2026-11-02T09:00:00.000Z' } },
};

const keptVersionsExample = {
  version: '5d1c0a9e7b3f2846',
  published_at: '2026-11-02T09:00:00.000Z',
  versions: [
    { version: '5d1c0a9e7b3f2846', published_at: '2026-11-02T09:00:00.000Z', changes: 'https://api.example.org/api/hsds/v3/changes?since=5d1c0a9e7b3f2846' },
    { version: '032ae266ba64c02d', published_at: '2026-11-01T09:00:00.000Z', changes: 'https://api.example.org/api/hsds/v3/changes?since=032ae266ba64c02d' },
  ],
  links: { self: 'https://api.example.org/api/hsds/v3/changes', everything: 'https://api.example.org/api/hsds/v3/changes?since=0' },
};

async function keptVersions(request: FastifyRequest) {
  const versions = (await request.store.versions()).reverse();
  const feed = (since: string) => `${request.apiUrl('/changes')}?since=${since}`;
  return {
    ...versionFields(versions[0]!),
    versions: versions.map((version) => ({ ...versionFields(version), changes: feed(version.version) })),
    links: { self: request.apiUrl('/changes'), everything: feed(NOTHING) },
  };
}

const changesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/changes',
    {
      config: { streamed: (query) => query.since !== undefined },
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: 'getChangesSinceVersion',
        summary: 'What changed since a dataset version: organizations added, changed and removed, as NDJSON',
        description:
          'For keeping a copy: the lines that bring a copy of dataset version `since` (`0`: of nothing) to the live version, streamed as NDJSON; without `since`, the versions kept, as JSON. Each line is `{"type": T, T: …}`: `changes` first; every `taxonomy` and `taxonomy_term` when they changed; each `removed_organization`; each `organization` added or changed (the full document); `end` last. A feed without its `end` line was cut short. Keep `version` and ask with `since=<version>` next time. Each organization appears once, so a feed is never longer than a full copy and the removed ids.',
        'x-profile-extension': true,
        querystring: querySchema(PARAMETERS),
        response: {
          200: {
            description: 'The changes, one JSON object per line; without `since`, the versions kept.',
            content: {
              'application/json': { schema: KeptVersions, example: keptVersionsExample },
              'application/x-ndjson': {
                schema: LINE_SCHEMA,
                examples: Object.fromEntries(Object.entries(LINE_EXAMPLES).map(([type, value]) => [type, { summary: `A \`${type}\` line`, value }])),
              },
            },
          },
          400: problemResponse('`since` is neither a dataset version (16 hexadecimal digits) nor `0`.', problemExamples.badParameter),
          410: problemResponse(
            `\`since\` is not one of the last ${KEPT_VERSIONS} versions of this dataset: copy everything again (\`since=0\`).`,
            problemExamples.versionNotKept,
          ),
        },
      },
      preValidation: readQuery(PARAMETERS),
    },
    async (request, reply) => {
      const since = request.parameters.since as string | undefined;
      if (since === undefined) return sendJson(reply, JSON.stringify(await keptVersions(request)));
      const changes = await request.store.changes(since === NOTHING ? undefined : since);
      if (changes === undefined) {
        const [oldest] = await request.store.versions();
        return sendProblem(reply, {
          kind: 'version-not-kept',
          title: 'Version not kept',
          status: 410,
          detail: `Version ${since} is not one whose changes this server keeps: it keeps those since at most the last ${KEPT_VERSIONS} versions it published, and none whose feed would remove more organizations than a copy holds; the oldest kept is ${oldest!.version} of ${oldest!.publishedAt}. Copy everything again: ${request.apiUrl('/changes')}?since=${NOTHING}`,
        });
      }
      // HEAD gets the headers without the work: Fastify would read a real stream to its end.
      return reply.sendStream(NDJSON_CONTENT_TYPE, request.method === 'HEAD' ? ndjsonLines(noItems()) : changeLines(request.store, changes));
    },
  );
};

export default changesRoutes;
