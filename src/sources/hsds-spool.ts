import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RowFields } from './files/fields.ts';
import type { SourceRow } from './files/csv.ts';
import { HSDS_COLUMNS, hsdsTablesSource } from './hsds-datapackage.ts';
import type { HsdsTable } from './hsds-package-layout.ts';
import type { ReadContext, Source } from './source.ts';

/**
 * HSDS documents as JSON, kept in files of an import's own (a spool) and read as the tables of an
 * HSDS package: an API's pages (hsds-api.ts) or a changes feed applied to a dataset (exchange/sync.ts).
 * Three files, one JSON line per item, `[where, JSON path, item]`: `taxonomies.ndjson`,
 * `taxonomy_terms.ndjson` and `organizations.ndjson` (full documents, with their attributes,
 * identifiers and additional websites). `where` (a URL) and the path locate each value in messages.
 */

export const SPOOL_FILES = { taxonomies: 'taxonomies.ndjson', terms: 'taxonomy_terms.ndjson', organizations: 'organizations.ndjson' } as const;

/** A file of one list as read: one line per item, `[url, JSON path, item]`. */
export class SpoolFile {
  readonly path: string;
  private readonly stream: WriteStream;
  count = 0;

  constructor(path: string) {
    this.path = path;
    this.stream = createWriteStream(path);
  }

  async write(url: string, path: string, item: unknown): Promise<void> {
    this.count++;
    if (!this.stream.write(`${JSON.stringify([url, path, item])}\n`)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, 'finish');
  }
}

export async function* spooled(path: string): AsyncGenerator<[string, string, Json]> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) if (line !== '') yield JSON.parse(line) as [string, string, Json];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of a JSON value as a CSV field would hold it: absent for null, numbers and booleans written out, objects as JSON. */
function fieldText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function row(item: Json, columns: readonly string[], defaults: Record<string, string>, line: number, path: string): SourceRow {
  const fields: Record<string, string> = {};
  for (const column of columns) {
    const text = fieldText(item[column]) ?? defaults[column];
    if (text !== undefined) fields[column] = text;
  }
  return { fields, line, path };
}

/** The columns a table of an HSDS package is read with (HSDS_COLUMNS): a JSON item gives the fields of those names. */
const columnsOf = (table: keyof typeof HSDS_COLUMNS): string[] => {
  const columns: { required: readonly string[]; optional?: readonly string[] } = HSDS_COLUMNS[table];
  return [...columns.required, ...(columns.optional ?? [])];
};
const ORGANIZATION_COLUMNS = columnsOf('organizations');

/** An organization's fields as the columns of its table: this profile's `provenance` object as the export's `provenance_*` columns. */
function organizationFields(item: Json): Json {
  const provenance = item.provenance;
  if (!isObject(provenance)) return item;
  return { ...item, provenance_source: provenance.source, provenance_location: provenance.location, provenance_source_id: provenance.source_id, provenance_read_at: provenance.read_at };
}
const TAXONOMY_COLUMNS = columnsOf('taxonomies');
const TERM_COLUMNS = columnsOf('taxonomy_terms');
const ATTRIBUTE_COLUMNS = columnsOf('attributes');
const IDENTIFIER_COLUMNS = columnsOf('organization_identifiers');
const URL_COLUMNS = columnsOf('urls');

/** What the spool in the folder `spooled` gives (once it has made it; undefined when it could not) holds, as an HSDS source. */
export function spooledHsdsSource(kind: 'hsds-api', path: string, spooledFolder: (context: ReadContext) => Promise<string | undefined>): Source {
  const TABLES: readonly HsdsTable[] = ['taxonomies', 'taxonomy_terms', 'organizations', 'attributes', 'organization_identifiers', 'urls'];

  async function* rowsOf(table: HsdsTable, context: ReadContext): AsyncGenerator<RowFields> {
    const folder = await spooledFolder(context);
    if (folder === undefined || !TABLES.includes(table)) return;
    const file = table === 'taxonomies' ? SPOOL_FILES.taxonomies : table === 'taxonomy_terms' ? SPOOL_FILES.terms : SPOOL_FILES.organizations;
    let line = 0;
    for await (const [url, at, item] of spooled(join(folder, file))) {
      line++;
      const fields = (item: Json, columns: readonly string[], path: string, defaults: Record<string, string> = {}) => new RowFields(url, row(item, columns, defaults, line, path), context.diagnostics);
      if (table === 'taxonomies') yield fields(item, TAXONOMY_COLUMNS, at);
      else if (table === 'taxonomy_terms') yield fields(item, TERM_COLUMNS, at);
      else if (table === 'organizations') yield fields(organizationFields(item), ORGANIZATION_COLUMNS, at);
      else {
        const key = table === 'attributes' ? 'attributes' : table === 'organization_identifiers' ? 'organization_identifiers' : 'additional_websites';
        const nested = item[key];
        if (!Array.isArray(nested)) continue;
        const id = item.id as string;
        for (const [index, value] of nested.entries()) {
          const path = `${at}.${key}[${index}]`;
          if (!isObject(value)) {
            context.diagnostics.error({ file: url, field: path }, 'is not an object');
            continue;
          }
          if (table === 'attributes') {
            const termId = value.taxonomy_term_id ?? (isObject(value.taxonomy_term) ? value.taxonomy_term.id : undefined);
            yield fields({ ...value, taxonomy_term_id: termId }, ATTRIBUTE_COLUMNS, path, { link_id: id, link_entity: 'organization' });
          } else if (table === 'organization_identifiers') yield fields(value, IDENTIFIER_COLUMNS, path, { organization_id: id });
          else yield fields(value, URL_COLUMNS, path, { organization_id: id });
        }
      }
    }
  }

  return hsdsTablesSource({
    kind,
    path,
    files: [],
    fileOf: (table) => `${path}/${table === 'taxonomy_terms' ? 'taxonomy_terms' : table === 'taxonomies' ? 'taxonomies' : 'organizations'}`,
    has: (table) => TABLES.includes(table),
    readable: async (context) => (await spooledFolder(context)) !== undefined,
    rowsOf,
  });
}
