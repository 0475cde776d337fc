import type { RowFields } from './files/fields.ts';
import type { HsdsTable } from './hsds-package-layout.ts';
import type { ReadContext } from './source.ts';
import { canonicalId, isUuid, missingTermId, servedIdOf, taxonomyId as derivedTaxonomyId } from '../hsds/ids.ts';
import { termIdOf } from '../hsds/render.ts';
import { isOutsideTaxonomy, outsideTaxonomy } from '../hsds/records.ts';
import type { TaxonomyRecord, TaxonomyTermRecord } from '../hsds/records.ts';

/**
 * The taxonomies and terms of an HSDS package, from any version's tables: 3.x taxonomies and terms,
 * 2.0 terms (whose `taxonomy` names the vocabulary) and the 1.x `taxonomy.csv`.
 */

/** The rows of one table of the package (nothing when it is absent). */
export type TableRows = (table: HsdsTable, context: ReadContext) => AsyncGenerator<RowFields>;

/** The id to serve: only a UUID is kept (the API looks things up by UUID); otherwise the build derives one. */
export const servedId = (value: string): string | undefined => (isUuid(value) ? value.toLowerCase() : undefined);

/** The code of the taxonomy of 1.x terms without a vocabulary: fixed, so that renaming the folder changes no id. */
const UNNAMED_TAXONOMY = 'taxonomy';

/** A taxonomy code made of a 1.x vocabulary or a 2.0 `taxonomy` name: `Open211 Miami - AIRS` → `open211-miami-airs`. */
const codeOfName = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || UNNAMED_TAXONOMY;

export interface TermRef {
  taxonomy: string;
  code: string;
}

/** Taxonomies and terms, read once per import (per Diagnostics) because terms and tags both need them. */
export interface HsdsVocabulary {
  taxonomies: TaxonomyRecord[];
  terms: TaxonomyTermRecord[];
  /** A kept term's id in the package → its taxonomy code and term code. */
  termsById: Map<string, TermRef>;
}

/** Reads the taxonomies and terms of a package whose tables `rowsOf` gives; `taxonomiesFile` names its taxonomies file in messages. */
export async function readHsdsVocabulary(context: ReadContext, rowsOf: TableRows, taxonomiesFile: string): Promise<HsdsVocabulary> {
  /** The taxonomies, and each one's code by its id in the package. */
  async function readTaxonomies(context: ReadContext): Promise<{ taxonomies: TaxonomyRecord[]; codeById: Map<string, string> }> {
    const taxonomies: TaxonomyRecord[] = [];
    const codeById = new Map<string, string>();
    for await (const row of rowsOf('taxonomies', context)) {
      const id = canonicalId(row.required('id', 'id'));
      const record: TaxonomyRecord = {
        // HSDS gives a taxonomy no code: its id stands for one, but where this API's export wrote the code served.
        code: row.optionalId('code', 'code') ?? id,
        id: servedId(id),
        name: row.required('name', 'name'),
        description: row.optional('description', 'description') ?? '',
        uri: row.url('uri'),
        version: row.optional('version', 'text'),
        at: row.at(),
      };
      if (row.valid) {
        taxonomies.push(record);
        codeById.set(id, record.code);
      }
    }
    return { taxonomies, codeById };
  }

  interface ReadTerm {
    record: TaxonomyTermRecord;
    termId: string;
    parentId: string | undefined;
  }

  /**
   * 3.x and 2.0 terms. A 3.x term's `taxonomy_id` may be empty (HSDS makes it optional) or name a
   * taxonomy not in the package (a warning): the term is served in no taxonomy of the dataset, with
   * `taxonomy_id` as given. 2.0 has no taxonomy table: the vocabulary its `taxonomy` names becomes a
   * taxonomy of the dataset.
   */
  async function readTerms(context: ReadContext, codeById: ReadonlyMap<string, string>): Promise<ReadTerm[]> {
    const read: ReadTerm[] = [];
    const firstLine = new Map<string, number>();
    for (const table of ['taxonomy_terms', 'taxonomy_terms_v2'] as const) {
      for await (const row of rowsOf(table, context)) {
        const termId = canonicalId(row.required('id', 'id'));
        // A 2.0 term's `taxonomy` names its taxonomy; a 3.x term's is free text.
        const taxonomyText = table === 'taxonomy_terms_v2' ? row.optionalId('taxonomy', 'text') : row.optional('taxonomy', 'text');
        const given = table === 'taxonomy_terms' ? row.optionalId('taxonomy_id', 'id') : undefined;
        let taxonomy = outsideTaxonomy(undefined);
        let taxonomyId: string | undefined;
        if (table === 'taxonomy_terms_v2') {
          if (taxonomyText !== undefined) taxonomy = codeOfName(taxonomyText);
        } else if (given !== undefined && codeById.has(canonicalId(given))) {
          taxonomy = codeById.get(canonicalId(given))!;
        } else if (given !== undefined) {
          taxonomy = outsideTaxonomy(canonicalId(given));
          taxonomyId = servedIdOf(given, derivedTaxonomyId);
          context.diagnostics.danglingReference(
            row.at('taxonomy_id'),
            `names taxonomy ${given}, which is not in ${taxonomiesFile}; the term is served with this taxonomy_id, in no taxonomy of the dataset`,
            'term of a taxonomy not in the package',
          );
        }
        const parentId = row.optionalId('parent_id', 'id');
        const record: TaxonomyTermRecord = {
          taxonomy,
          // Codes must be unique within a taxonomy; a term without one is known by its id.
          code: (table === 'taxonomy_terms' ? row.optionalId('code', 'code') : undefined) ?? termId,
          id: servedId(termId),
          name: row.required(table === 'taxonomy_terms' ? 'name' : 'term', 'name'),
          description: row.optional('description', 'description') ?? '',
          taxonomyText: taxonomyText ?? '',
          taxonomyId,
          language: row.optional('language', 'text'),
          termUri: table === 'taxonomy_terms' ? row.url('term_uri') : undefined,
          lenientReferences: true,
          at: row.at(),
        };
        if (termId !== '') {
          const first = firstLine.get(termId);
          if (first !== undefined) row.error('id', `${termId} is already the id of the term on line ${first}`);
          else firstLine.set(termId, row.line);
        }
        if (row.valid) read.push({ record, termId, parentId: parentId === undefined ? undefined : canonicalId(parentId) });
      }
    }
    return read;
  }

  /**
   * 1.x `taxonomy.csv`: terms whose code is their id, in the taxonomy their `vocabulary` names. A
   * repeated id keeps its first row, with a warning: 1.x declares no key.
   */
  async function readVersion1Terms(context: ReadContext): Promise<{ taxonomies: TaxonomyRecord[]; read: ReadTerm[] }> {
    const taxonomies = new Map<string, TaxonomyRecord>();
    const read: ReadTerm[] = [];
    const firstLine = new Map<string, number>();
    for await (const row of rowsOf('taxonomy_v1', context)) {
      const termId = canonicalId(row.required('id', 'code'));
      const vocabulary = row.optionalId('vocabulary', 'name');
      const code = vocabulary === undefined ? UNNAMED_TAXONOMY : codeOfName(vocabulary);
      if (!taxonomies.has(code)) taxonomies.set(code, { code, name: vocabulary ?? 'Taxonomy', description: '', at: row.at('vocabulary') });
      const record: TaxonomyTermRecord = {
        taxonomy: code,
        code: termId,
        id: servedId(termId),
        name: row.required('name', 'name'),
        description: '',
        taxonomyText: vocabulary ?? '',
        lenientReferences: true,
        at: row.at(),
      };
      const parentId = row.optionalId('parent_id', 'code');
      if (!row.valid) continue;
      const first = firstLine.get(termId);
      if (first !== undefined) {
        row.warning('term defined twice (the first is kept)', 'id', `${termId} is already the id of the term on line ${first}; this row is left out`);
        continue;
      }
      firstLine.set(termId, row.line);
      read.push({ record, termId, parentId: parentId === undefined ? undefined : canonicalId(parentId) });
    }
    return { taxonomies: [...taxonomies.values()], read };
  }

  /**
   * Links parents by id. A parent in the term's own taxonomy is linked by its code (the build checks
   * the tree); any other parent is served as given, with a warning: its id when it is in the package
   * (in another taxonomy), else the id given (HSDS declares no reference for parent_id).
   */
  function linkParents(context: ReadContext, read: readonly ReadTerm[]): void {
    const byId = new Map(read.map((term) => [term.termId, term.record]));
    for (const { record, parentId } of read) {
      if (parentId === undefined) continue;
      record.parentField = 'parent_id';
      const parent = byId.get(parentId);
      if (parent !== undefined && parent.taxonomy === record.taxonomy) {
        record.parentCode = parent.code;
        continue;
      }
      record.parentId = parent === undefined ? servedIdOf(parentId, (id) => missingTermId(record.taxonomy, id)) : termIdOf(parent);
      const where = parent === undefined ? 'which is not in the package' : 'which is in another taxonomy';
      context.diagnostics.danglingReference({ ...record.at!, field: 'parent_id' }, `names term ${parentId}, ${where}; served as given`, 'term whose parent is not in its taxonomy in the package');
    }
  }

  const { taxonomies, codeById } = await readTaxonomies(context);
  const read = await readTerms(context, codeById);
  const version1 = await readVersion1Terms(context);
  // 2.0 taxonomies come from the names its terms give.
  const known = new Set(taxonomies.map((taxonomy) => taxonomy.code));
  for (const { record } of read) {
    if (isOutsideTaxonomy(record.taxonomy) || known.has(record.taxonomy)) continue;
    known.add(record.taxonomy);
    taxonomies.push({ code: record.taxonomy, name: record.taxonomyText!, description: '', at: record.at });
  }
  taxonomies.push(...version1.taxonomies);
  const all = [...read, ...version1.read];
  linkParents(context, all);
  return {
    taxonomies,
    terms: all.map(({ record }) => record),
    termsById: new Map(all.map(({ record, termId }) => [termId, { taxonomy: record.taxonomy, code: record.code }])),
  };
}
