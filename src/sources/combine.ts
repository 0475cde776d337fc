import { termKey } from '../hsds/records.ts';
import { basename } from 'node:path';
import type { DatasetInput, OrganizationRecord, TagRecord, TaxonomyRecord, TaxonomyTermRecord } from '../hsds/records.ts';
import type { ReadContext, Source, Vocabulary } from './source.ts';

export function vocabularyOf(taxonomies: readonly TaxonomyRecord[], terms: readonly TaxonomyTermRecord[]): Vocabulary {
  const taxonomyCodes = new Set(taxonomies.map((taxonomy) => taxonomy.code));
  const parents = new Map(terms.map((term) => [termKey(term.taxonomy, term.code), term.parentCode]));
  return {
    hasTaxonomy: (code) => taxonomyCodes.has(code),
    hasTerm: (taxonomy, code) => parents.has(termKey(taxonomy, code)),
    parentOf: (taxonomy, code) => parents.get(termKey(taxonomy, code)),
  };
}

async function* chain<T>(sources: readonly Source[], part: (source: Source) => AsyncIterable<T> | undefined): AsyncGenerator<T> {
  for (const source of sources) {
    const items = part(source);
    if (items !== undefined) yield* items;
  }
}

/**
 * What a source is called in provenance. Only what does not move with the files: the IRS file's own
 * name, the kind of files, an API's host; never a folder's path, so that publishing the same data
 * from another folder, or as NDJSON rather than CSV, changes no organization.
 */
function sourceName(source: Source): string {
  if (source.kind === 'irs') return 'IRS Exempt Organizations Business Master File';
  if (source.kind === 'hsds-api') return new URL(source.path).host;
  return source.kind === 'hsds' ? 'HSDS package' : 'native files';
}

/** A file's name without its folder or its format's extensions (`eo_ri.csv.gz` → `eo_ri`). */
const tableName = (file: string): string => basename(file).replace(/(\.gz)?$/i, '').replace(/\.(csv|ndjson|json)$/i, '');

/**
 * Every organization, each with where it came from (what its source gave, else this source: its
 * name, the file or URL, the organization's id there) and which source it was, in the order listed.
 */
async function* withProvenance(sources: readonly Source[], context: ReadContext, vocabulary: Vocabulary): AsyncGenerator<OrganizationRecord> {
  for (const [index, source] of sources.entries()) {
    const organizations = source.organizations?.(context, vocabulary);
    if (organizations === undefined) continue;
    const name = sourceName(source);
    for await (const organization of organizations) {
      organization.provenance ??= {
        source: name,
        location: source.kind === 'hsds-api' ? source.path : tableName(organization.at?.file ?? source.path),
        sourceId: organization.nativeId ?? organization.externalId,
      };
      organization.sourceIndex = index;
      yield organization;
    }
  }
}

/**
 * Combines sources into one dataset: taxonomies and terms of all of them are read first (they are
 * small), so organization readers and crosswalks can check codes; organizations and links stream.
 */
export async function combineSources(sources: readonly Source[], context: ReadContext): Promise<DatasetInput> {
  const taxonomies: TaxonomyRecord[] = [];
  const terms: TaxonomyTermRecord[] = [];
  for (const source of sources) {
    if (source.taxonomies !== undefined) taxonomies.push(...(await source.taxonomies(context)));
    if (source.terms !== undefined) terms.push(...(await source.terms(context)));
  }
  const vocabulary = vocabularyOf(taxonomies, terms);
  const implications: ((tag: TagRecord) => readonly TagRecord[])[] = [];
  for (const source of sources) {
    if (source.impliedTags !== undefined) implications.push(await source.impliedTags(context, vocabulary));
  }
  return {
    taxonomies,
    terms,
    organizations: withProvenance(sources, context, vocabulary),
    tags: chain(sources, (source) => source.tags?.(context)),
    identifiers: chain(sources, (source) => source.identifiers?.(context)),
    urls: chain(sources, (source) => source.urls?.(context)),
    impliedTags: implications.length === 0 ? undefined : (tag) => implications.flatMap((implied) => implied(tag)),
  };
}
