import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyPluginAsync } from 'fastify';
import { DatasetChanged, PackageArchives } from '../../exchange/package-archives.ts';
import type { PackageArchive } from '../../exchange/package-archives.ts';
import type { StoreProvider } from '../../store/store.ts';
import { ServiceBusy } from '../problem.ts';
import { EXAMPLE_ORIGIN, problemExamples } from '../examples.ts';
import { HSDS_OPTIONAL, problemResponse } from '../schemas.ts';

export const DATAPACKAGE_PATH = '/datapackage.zip';

/** How long a request waits for the package of a version still being made, before a 503 asks it to come back. */
const WAIT_FOR_MAKING_MS = 20_000;
const RETRY_AFTER_SECONDS = 30;

/**
 * The dataset as an HSDS tabular package (exchange/tabular-package.ts): a ZIP archive made once per
 * dataset version (exchange/package-archives.ts) and sent as a file, with the version's validators
 * and cache policy like any response of it. The first request for a version waits while it is made
 * (about 7 s for 326,224 organizations), up to WAIT_FOR_MAKING_MS; past that it is a 503 with
 * Retry-After, and the archive goes on being made.
 */
const datapackageRoutes: FastifyPluginAsync<{ stores: StoreProvider; directory: string }> = async (app, { stores, directory }) => {
  const archives = new PackageArchives(directory, stores, async () => app.turns.take());

  async function archiveOf(version: string): Promise<PackageArchive | undefined> {
    const making = archives.archive(version);
    const waited = await Promise.race([making, sleep(WAIT_FOR_MAKING_MS, undefined, { ref: false })]);
    // Whatever becomes of it, the making goes on: a failure is logged once, by the request that sees it.
    making.catch(() => {});
    return waited;
  }

  app.get(
    DATAPACKAGE_PATH,
    {
      config: { precompressed: true },
      schema: {
        tags: HSDS_OPTIONAL,
        operationId: 'getTabularDataPackage',
        'x-profile-extension': true,
        summary: 'The whole dataset as an HSDS tabular data package (ZIP)',
        description:
          'Every organization, organization identifier, url, attribute, taxonomy and taxonomy term served, as CSV files with the file names, columns and column order of HSDS\'s tabular descriptor, and a `datapackage.json` (Frictionless Data Package) describing them: types, required fields, primary and foreign keys, and this profile\'s extension columns. Made once per dataset version; `import` reads it back. See docs/exchange.md.',
        response: {
          200: {
            description: 'The package, as a ZIP archive.',
            content: {
              'application/zip': {
                schema: { type: 'string', format: 'binary' },
                examples: {
                  package: {
                    summary: 'What this path gives',
                    description: 'datapackage.json, taxonomies.csv, taxonomy_terms.csv, organizations.csv, organization_identifiers.csv, urls.csv and attributes.csv, in that order (for the bundled dataset, 44 MB).',
                    externalValue: `${EXAMPLE_ORIGIN}${DATAPACKAGE_PATH}`,
                  },
                },
              },
            },
          },
          503: problemResponse('The package of this dataset version is still being made (Retry-After says when to come back), or no dataset is loaded.', problemExamples.packageBeingMade),
        },
      },
    },
    async (request, reply) => {
      const { version } = await request.store.info();
      let archive: PackageArchive | undefined;
      try {
        archive = await archiveOf(version);
      } catch (error) {
        if (!(error instanceof DatasetChanged)) throw error;
        // The request's own dataset is no longer the one served: it gets the one served now, whose package is asked for anew.
        throw new ServiceBusy(`A new dataset was published while its package was being made. Try again in a few seconds.`, 5);
      }
      if (archive === undefined) throw new ServiceBusy(`The package of dataset version ${version} is being made. Try again in ${RETRY_AFTER_SECONDS} s.`, RETRY_AFTER_SECONDS);
      reply
        .type('application/zip')
        .header('content-length', archive.bytes)
        .header('content-disposition', `attachment; filename="hsds-${version}.zip"`);
      return reply.send(createReadStream(archive.path));
    },
  );
};

export default datapackageRoutes;
