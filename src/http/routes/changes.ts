import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { TSchema } from 'typebox';
import { KEPT_VERSIONS } from '../../store/sqlite-schema.ts';
import type { Changes, DatasetVersion, Store } from '../../store/store.ts';
import { examples, problemExamples } from '../examples.ts';
import { sendProblem } from '../problem.ts';
import { documented, fail, querySchema, readQuery } from '../query.ts';
import type { QueryParameter } from '../query.ts';
import { HSDS_OPTIONAL, profileSchema, problemResponse } from '../schemas.ts';
import { NDJSON_CONTENT_TYPE, ndjsonLines, noItems } from './list.ts';

/**
 * The changes feed: what a copy of the organizations (and taxonomies) needs to become the live
 * dataset, from a version it holds. One NDJSON line per change, each `{"type": T, T: object}`:
 * first a `changes` line saying from which version to which and how many changes follow; then, when
 * the taxonomies and terms differ, every `taxonomy` and every `taxonomy_term`; every organization
 * removed (`removed_organization`); every organization added or changed (`organization`, the full
 * document); last an `end` line. Without `end`, the feed was cut short and should not be applied.
 */

const VERSION = /^[0-9a-f]{16}$/;

const sinceParameter: QueryParameter<string> = {
  schema: Type.Optional(
    Type.String({
      pattern: VERSION.source,
      ...documented(
        `A dataset version this client holds (\`dataset.version\` of the API root, or \`version\` of the feed's \`changes\` line). Left out: everything, as if the client held nothing. The server keeps the changes since each of the last ${KEPT_VERSIONS} versions it published; an older one (or one it never published) is a \`410\`.`,
        ['032ae266ba64c02d'],
      ),
    }),
  ),
  read: (raw) => (VERSION.test(raw.trim()) ? raw.trim() : fail('must be a dataset version: 16 hexadecimal digits, as dataset.version of the API root gives')),
};

const PARAMETERS = { since: sinceParameter };

const versionFields = (version: DatasetVersion) => ({ version: version.version, published_at: version.publishedAt });

const line = (type: string, object: unknown): string => `${JSON.stringify({ type, [type]: object })}\n`;

/** Stored JSON, each wrapped as a line of `type`, without parsing it. */
const lines = (type: string, objects: readonly string[]): string => objects.map((json) => `{"type":"${type}","${type}":${json}}\n`).join('');

export async function* changeLines(store: Store, changes: Changes): AsyncGenerator<string> {
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
      since: Type.Union([VersionRef, Type.Null()], { description: 'The version asked about; null when `since` was left out.' }),
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

const changesExample = [
  { type: 'changes', changes: { since: { version: '032ae266ba64c02d', published_at: '2026-11-01T09:00:00.000Z' }, version: '5d1c0a9e7b3f2846', published_at: '2026-11-02T09:00:00.000Z', taxonomies_changed: false, organizations_changed: 1, organizations_removed: 1 } },
  { type: 'removed_organization', removed_organization: { id: '3f0c1e9a-0000-5000-8000-000000000000', external_identifier: '990000009', removed_at: '2026-11-02T09:00:00.000Z' } },
  { type: 'organization', organization: examples.organization },
  { type: 'end', end: { version: '5d1c0a9e7b3f2846', published_at: '2026-11-02T09:00:00.000Z' } },
]
  .map((object) => JSON.stringify(object))
  .join('\n');

const changesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/changes',
    {
      config: { streamed: true },
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: 'getChangesSinceVersion',
        summary: 'What changed since a dataset version: organizations added, changed and removed, as NDJSON',
        description:
          'For keeping a copy: the lines that bring a copy of dataset version `since` to the live version, streamed as NDJSON. Each line is `{"type": T, T: …}`: `changes` first; every `taxonomy` and `taxonomy_term` when they changed; each `removed_organization`; each `organization` added or changed (the full document); `end` last. A feed without its `end` line was cut short. Keep `version` and ask with `since=<version>` next time. Each organization appears once, so a feed is never longer than a full copy and the removed ids.',
        'x-profile-extension': true,
        querystring: querySchema(PARAMETERS),
        response: {
          200: {
            description: 'The changes, one JSON object per line.',
            content: { 'application/x-ndjson': { schema: LINE_SCHEMA, example: changesExample } },
          },
          400: problemResponse('`since` is not a dataset version (16 hexadecimal digits).', problemExamples.badParameter),
          410: problemResponse(
            `\`since\` is not one of the last ${KEPT_VERSIONS} versions of this dataset: copy everything again (this path without \`since\`).`,
            problemExamples.versionNotKept,
          ),
        },
      },
      preValidation: readQuery(PARAMETERS),
    },
    async (request, reply) => {
      const since = request.parameters.since as string | undefined;
      const changes = await request.store.changes(since);
      if (changes === undefined) {
        const [oldest] = await request.store.versions();
        return sendProblem(reply, {
          kind: 'version-not-kept',
          title: 'Version not kept',
          status: 410,
          detail: `Version ${since} is not one whose changes this server keeps: it keeps those since each of the last ${KEPT_VERSIONS} versions it published, the oldest ${oldest!.version} of ${oldest!.publishedAt}. Copy everything again: ${request.apiUrl('/changes')} without since.`,
        });
      }
      // HEAD gets the headers without the work: Fastify would read a real stream to its end.
      return reply.sendStream(NDJSON_CONTENT_TYPE, request.method === 'HEAD' ? ndjsonLines(noItems()) : changeLines(request.store, changes));
    },
  );
};

export default changesRoutes;
