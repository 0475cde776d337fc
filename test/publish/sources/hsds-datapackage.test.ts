import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Diagnostics } from '../../../src/sources/files/diagnostics.ts';
import { hsdsDatapackageSource } from '../../../src/sources/hsds-datapackage.ts';
import type { ReadContext, Source, Vocabulary } from '../../../src/sources/source.ts';
import { outsideTaxonomy } from '../../../src/hsds/records.ts';
import { missingTermId, taxonomyId, taxonomyTermId } from '../../../src/hsds/ids.ts';
import type { IdentifierLink, OrganizationRecord, TagLink, TaxonomyRecord, TaxonomyTermRecord } from '../../../src/hsds/records.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures');
const CONSISTENT = join(FIXTURES, 'hsds-example-consistent');
const OFFICIAL = join(FIXTURES, 'hsds-example');

const TAXONOMY_ID = '5c4d79d7-cc55-470e-9f1f-8cad074e4892';
const TERM_ID = '3f7b145d-84af-42d7-8fae-eaca714b02b2';
const ORGANIZATION_ID = 'd9d5e0f5-d3ce-4f73-9a2f-4dd0ecc6c610';
const ATTRIBUTE_ID = 'ae58cc39-8b70-4ab1-8aea-786882e5ac8e';
const IDENTIFIER_ID = 'd4dbcebc-0802-47cb-8651-b937ac4f2f3e';

/** This reader does not consult the vocabulary of other sources. */
const noVocabulary: Vocabulary = {
  hasTaxonomy: () => false,
  hasTerm: () => false,
  parentOf: () => undefined,
};

interface Read {
  diagnostics: Diagnostics;
  taxonomies: TaxonomyRecord[];
  terms: TaxonomyTermRecord[];
  organizations: OrganizationRecord[];
  tags: TagLink[];
  identifiers: IdentifierLink[];
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Reads every part of a source, the way an import does: one context for all of them. */
async function readAll(source: Source): Promise<Read> {
  const diagnostics = new Diagnostics();
  const context: ReadContext = { diagnostics };
  return {
    diagnostics,
    taxonomies: (await source.taxonomies?.(context)) ?? [],
    terms: (await source.terms?.(context)) ?? [],
    organizations: source.organizations === undefined ? [] : await collect(source.organizations(context, noVocabulary)),
    tags: source.tags === undefined ? [] : await collect(source.tags(context)),
    identifiers: source.identifiers === undefined ? [] : await collect(source.identifiers(context)),
  };
}

function temporaryDirectory(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'hsds-datapackage-test-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

function writeFiles(directory: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
}

const MINIMAL = {
  'taxonomies.csv': 'id,name,description\nt1,Things,\n',
  'taxonomy_terms.csv': 'id,code,name,taxonomy_id,parent_id\nterm-a,A,Thing A,t1,\nterm-b,,Thing B,t1,term-a\nterm-c,C,Thing C,t1,nowhere\n',
  'organizations.csv': 'id,name\norg-1,One\n',
  'attributes.csv': 'id,link_id,taxonomy_term_id,link_entity\nattr-1,org-1,term-b,organization\nattr-2,org-1,term-x,organization\nattr-3,svc-1,term-a,service\n',
  'organization_identifiers.csv': 'id,organization_id,identifier_scheme,identifier_type,identifier\nident-1,org-1,,Charity number,42\n',
};

describe('reading HSDS 3.0 tabular data', () => {
  it('reads the official example, made consistent, keeping its ids', async () => {
    const source = hsdsDatapackageSource(CONSISTENT);
    assert.equal(source.kind, 'hsds');
    assert.equal(source.path, CONSISTENT);
    assert.deepEqual(
      [...source.files].sort(),
      ['attributes.csv', 'organization_identifiers.csv', 'organizations.csv', 'taxonomies.csv', 'taxonomy_terms.csv'].map((name) => join(CONSISTENT, name)),
    );
    const read = await readAll(source);
    assert.deepEqual(read.diagnostics.errors, []);
    // Every column of the five tables is an HSDS column: the one warning names metadata.csv, which is not read.
    assert.deepEqual(
      read.diagnostics.warnings.map(({ kind, examples }) => [kind, examples[0]!.message]),
      [['file not read', 'not read (this API serves organizations and taxonomies only): metadata.csv']],
    );

    assert.equal(read.taxonomies.length, 1);
    const taxonomy = read.taxonomies[0]!;
    assert.equal(taxonomy.id, TAXONOMY_ID);
    assert.equal(taxonomy.code, TAXONOMY_ID);
    assert.equal(taxonomy.name, 'name');
    assert.equal(taxonomy.description, 'description');
    assert.equal(taxonomy.uri, 'http://example.com');
    assert.equal(taxonomy.version, 'version');
    assert.deepEqual(taxonomy.at, { file: join(CONSISTENT, 'taxonomies.csv'), line: 2, field: undefined });

    assert.equal(read.terms.length, 1);
    const term = read.terms[0]!;
    assert.equal(term.id, TERM_ID);
    assert.equal(term.code, 'code');
    assert.equal(term.taxonomy, TAXONOMY_ID);
    assert.equal(term.name, 'name');
    assert.equal(term.description, 'description');
    assert.equal(term.parentCode, undefined);
    assert.equal(term.termUri, 'http://example.com');

    assert.equal(read.organizations.length, 1);
    const organization = read.organizations[0]!;
    assert.equal(organization.externalId, ORGANIZATION_ID);
    assert.equal(organization.status, 'published');
    assert.equal(organization.name, 'Example Organization Inc.');
    assert.equal(organization.alternateName, 'Example Org');
    assert.equal(organization.email, 'email@example.com');
    assert.equal(organization.website, 'http://example.com');
    assert.equal(organization.yearIncorporated, 2011);
    assert.equal(organization.legalStatus, 'Limited Company');
    assert.equal(organization.parentExternalId, 'cd09a387-91f4-4555-94ec-e799c35344cd');
    assert.deepEqual(organization.identifiers, []);
    assert.deepEqual(organization.tags, []);

    assert.deepEqual(read.tags, [
      {
        organization: ORGANIZATION_ID,
        taxonomy: TAXONOMY_ID,
        code: 'code',
        attributeId: ATTRIBUTE_ID,
        // The example's placeholders, carried as given.
        linkType: 'link_type',
        value: 'value',
        label: undefined,
        lenientReferences: true,
        at: { file: join(CONSISTENT, 'attributes.csv'), line: 2, field: 'link_id' },
      },
    ]);
    assert.deepEqual(read.identifiers, [
      {
        organization: ORGANIZATION_ID,
        scheme: 'GB-COH',
        type: 'Company number',
        identifier: '1234567',
        id: IDENTIFIER_ID,
        lenientReferences: true,
        at: { file: join(CONSISTENT, 'organization_identifiers.csv'), line: 2, field: 'organization_id' },
      },
    ]);
  });

  it('reads the official example as it is: references to rows not in it are warnings, and what they name is kept as given', async () => {
    const read = await readAll(hsdsDatapackageSource(OFFICIAL));
    assert.deepEqual(read.diagnostics.errors, []);
    const warnings = new Map(read.diagnostics.warnings.map((summary) => [summary.kind, summary.examples[0]]));
    assert.deepEqual(warnings.get('term of a taxonomy not in the package'), {
      file: join(OFFICIAL, 'taxonomy_terms.csv'),
      line: 2,
      field: 'taxonomy_id',
      message: 'names taxonomy 07ff6aee-a219-438c-b694-d2fcb6c5373b, which is not in taxonomies.csv; the term is served with this taxonomy_id, in no taxonomy of the dataset',
    });
    assert.deepEqual(warnings.get('attribute not linked to an organization or service'), {
      file: join(OFFICIAL, 'attributes.csv'),
      line: 2,
      field: 'link_entity',
      message: 'is "link_entity", not "organization" or "service": only the attributes of organizations and their services are imported; skipped',
    });
    const [term] = read.terms;
    assert.deepEqual(
      [term?.taxonomy, term?.taxonomyId, term?.taxonomyText, term?.parentId, term?.language],
      [outsideTaxonomy('07ff6aee-a219-438c-b694-d2fcb6c5373b'), '07ff6aee-a219-438c-b694-d2fcb6c5373b', 'taxonomy', '0bc248fa-dc27-4650-9ba4-8f1a24ef16a2', 'eng'],
    );
    assert.deepEqual(read.tags, []);
    assert.equal(read.organizations[0]?.parentExternalId, 'cd09a387-91f4-4555-94ec-e799c35344cd');
    assert.equal(read.organizations[0]?.logo, 'https://openreferral.org/wp-content/uploads/2018/02/OpenReferral_Logo_Green-4-1.png');
    assert.equal(read.identifiers.length, 1);
  });

  it('reports a missing organizations.csv by its file name, when organizations are read', async () => {
    const directory = temporaryDirectory();
    try {
      writeFiles(directory.path, { 'taxonomies.csv': MINIMAL['taxonomies.csv'] });
      const source = hsdsDatapackageSource(directory.path);
      assert.deepEqual(source.files, [join(directory.path, 'taxonomies.csv')]);
      const read = await readAll(source);
      assert.deepEqual(read.diagnostics.errors, [{ file: directory.path, message: 'no organizations.csv: an HSDS package needs its organizations table' }]);
      assert.equal(read.taxonomies.length, 1);
      assert.deepEqual([read.terms, read.organizations, read.tags, read.identifiers], [[], [], [], []]);
    } finally {
      directory.remove();
    }
  });

  it('uses the term id as the code when there is none, and resolves parents by id', async () => {
    const directory = temporaryDirectory();
    try {
      writeFiles(directory.path, MINIMAL);
      const read = await readAll(hsdsDatapackageSource(directory.path));
      assert.deepEqual(
        read.terms.map(({ taxonomy, code, parentCode, parentId, id }) => ({ taxonomy, code, parentCode, parentId, id })),
        [
          { taxonomy: 't1', code: 'A', parentCode: undefined, parentId: undefined, id: undefined },
          { taxonomy: 't1', code: 'term-b', parentCode: 'A', parentId: undefined, id: undefined },
          // A parent naming no term is served as given (a warning): the id derived from it, never a term with that code.
          { taxonomy: 't1', code: 'C', parentCode: undefined, parentId: missingTermId('t1', 'nowhere'), id: undefined },
        ],
      );
      // Ids that are not UUIDs are not served: the build derives UUIDs for them.
      assert.equal(read.taxonomies[0]!.id, undefined);
      assert.equal(read.taxonomies[0]!.code, 't1');
      assert.deepEqual(read.tags, [
        {
          organization: 'org-1',
          taxonomy: 't1',
          code: 'term-b',
          attributeId: undefined,
          linkType: undefined,
          value: undefined,
          label: undefined,
          lenientReferences: true,
          at: { file: join(directory.path, 'attributes.csv'), line: 2, field: 'link_id' },
        },
      ]);
      assert.deepEqual(read.diagnostics.errors, []);
      assert.deepEqual(read.diagnostics.warnings.find((summary) => summary.kind === 'tag naming a term not in the package')?.examples, [
        { file: join(directory.path, 'attributes.csv'), line: 3, field: 'taxonomy_term_id', message: 'names term term-x, which is not in taxonomy_terms.csv; left out' },
      ]);
      // attr-3 is of a service, and the package has no services.csv to say whose.
      assert.equal(read.diagnostics.warnings.find((summary) => summary.kind === 'tag of a service not in the package')?.count, 1);
      assert.deepEqual(read.identifiers.map(({ organization, scheme, type, identifier }) => ({ organization, scheme, type, identifier })), [
        { organization: 'org-1', scheme: undefined, type: 'Charity number', identifier: '42' },
      ]);
    } finally {
      directory.remove();
    }
  });

  it('keeps terms of no taxonomy, serves a parent in another taxonomy as given, and reports repeated term ids', async () => {
    const directory = temporaryDirectory();
    try {
      writeFiles(directory.path, {
        ...MINIMAL,
        'taxonomies.csv': 'id,name\nt1,One\nt2,Two\n',
        'taxonomy_terms.csv': 'id,name,taxonomy_id,parent_id\na,A,t1,\nb,B,,\nc,C,t2,a\na,Again,t1,\n',
      });
      const read = await readAll(hsdsDatapackageSource(directory.path));
      const file = join(directory.path, 'taxonomy_terms.csv');
      assert.deepEqual(
        read.diagnostics.errors.filter((error) => error.file === file),
        [
          { file, line: 5, field: 'id', message: 'a is already the id of the term on line 2' },
        ],
      );
      // The parent in another taxonomy comes after the repeated id's error: counted, not listed (one cause, one message).
      assert.ok(read.diagnostics.uncheckedReferences >= 1);
      assert.deepEqual(read.terms.map((term) => [term.code, term.taxonomy, term.parentId]), [
        ['a', 't1', undefined],
        ['b', outsideTaxonomy(undefined), undefined],
        ['c', 't2', taxonomyTermId('t1', 'a')],
      ]);
    } finally {
      directory.remove();
    }
  });

  it('lower-cases UUID ids, and matches references to them whatever their case', async () => {
    const directory = temporaryDirectory();
    const upper = (id: string) => id.toUpperCase();
    try {
      writeFiles(directory.path, {
        'taxonomies.csv': `id,name\n${upper(TAXONOMY_ID)},Things\n`,
        'taxonomy_terms.csv': `id,name,taxonomy_id\n${upper(TERM_ID)},A thing,${TAXONOMY_ID}\n`,
        'organizations.csv': `id,name,parent_organization_id\n${upper(ORGANIZATION_ID)},One,${upper(IDENTIFIER_ID)}\n`,
        'attributes.csv': `id,link_id,taxonomy_term_id,link_entity\n${upper(ATTRIBUTE_ID)},${ORGANIZATION_ID},${TERM_ID},Organization\n`,
        'organization_identifiers.csv': `id,organization_id,identifier_type,identifier\n${upper(IDENTIFIER_ID)},${upper(ORGANIZATION_ID)},Number,1\n`,
      });
      const read = await readAll(hsdsDatapackageSource(directory.path));
      assert.deepEqual(read.diagnostics.errors, []);
      assert.deepEqual([read.taxonomies[0]!.id, read.taxonomies[0]!.code], [TAXONOMY_ID, TAXONOMY_ID]);
      assert.deepEqual([read.terms[0]!.id, read.terms[0]!.code, read.terms[0]!.taxonomy], [TERM_ID, TERM_ID, TAXONOMY_ID]);
      assert.equal(read.organizations[0]!.externalId, ORGANIZATION_ID);
      assert.equal(read.organizations[0]!.parentExternalId, IDENTIFIER_ID);
      assert.deepEqual(
        read.tags.map(({ organization, taxonomy, code, attributeId }) => ({ organization, taxonomy, code, attributeId })),
        [{ organization: ORGANIZATION_ID, taxonomy: TAXONOMY_ID, code: TERM_ID, attributeId: ATTRIBUTE_ID }],
      );
      assert.deepEqual([read.identifiers[0]!.id, read.identifiers[0]!.organization], [IDENTIFIER_ID, ORGANIZATION_ID]);
    } finally {
      directory.remove();
    }
  });

  it('finds the files where datapackage.json says they are', async () => {
    const directory = temporaryDirectory();
    try {
      writeFiles(directory.path, {
        'datapackage.json': JSON.stringify({
          name: 'example',
          resources: [
            { name: 'organizations', path: 'orgs.csv' },
            { name: 'taxonomies', path: 'vocabularies.csv' },
            { name: 'taxonomy_terms', path: 'vocabulary-terms.csv' },
            { name: 'services', path: 'services.csv' },
          ],
        }),
        'orgs.csv': MINIMAL['organizations.csv'],
        'vocabularies.csv': MINIMAL['taxonomies.csv'],
        'vocabulary-terms.csv': 'id,name,taxonomy_id\nterm-a,Thing A,t1\nterm-b,Thing B,elsewhere\n',
        // Not named in datapackage.json, so found by its HSDS name.
        'organization_identifiers.csv': MINIMAL['organization_identifiers.csv'],
        // Ignored: datapackage.json names other files for these resources.
        'organizations.csv': 'id,name\nignored,Ignored\n',
      });
      const source = hsdsDatapackageSource(directory.path);
      assert.deepEqual(
        [...source.files].sort(),
        ['organization_identifiers.csv', 'orgs.csv', 'vocabularies.csv', 'vocabulary-terms.csv'].map((name) => join(directory.path, name)),
      );
      const read = await readAll(source);
      assert.deepEqual(read.organizations.map((organization) => organization.externalId), ['org-1']);
      assert.deepEqual(read.terms.map((term) => [term.code, term.taxonomy, term.taxonomyId]), [['term-a', 't1', undefined], ['term-b', outsideTaxonomy('elsewhere'), taxonomyId('elsewhere')]]);
      assert.deepEqual(read.identifiers.length, 1);
      assert.deepEqual(read.diagnostics.errors, []);
      assert.deepEqual(read.diagnostics.warnings.find((summary) => summary.kind === 'term of a taxonomy not in the package')?.examples[0], {
        file: join(directory.path, 'vocabulary-terms.csv'),
        line: 3,
        field: 'taxonomy_id',
        message: 'names taxonomy elsewhere, which is not in vocabularies.csv; the term is served with this taxonomy_id, in no taxonomy of the dataset',
      });
      assert.match(read.diagnostics.warnings.find((summary) => summary.kind === 'file not read')!.examples[0]!.message, /: organizations\.csv$/);
    } finally {
      directory.remove();
    }
  });

  it('reports a datapackage.json that is not JSON, or names unsafe paths, once, and reads nothing', async () => {
    const directory = temporaryDirectory();
    try {
      writeFiles(directory.path, { ...MINIMAL, 'datapackage.json': '{"resources": [' });
      const broken = await readAll(hsdsDatapackageSource(directory.path));
      assert.equal(broken.diagnostics.errors.length, 1);
      assert.equal(broken.diagnostics.errors[0]!.file, join(directory.path, 'datapackage.json'));
      assert.match(broken.diagnostics.errors[0]!.message, /^not valid JSON: /);
      assert.deepEqual([broken.taxonomies, broken.terms, broken.organizations, broken.tags, broken.identifiers], [[], [], [], [], []]);

      writeFiles(directory.path, {
        'datapackage.json': JSON.stringify({
          resources: [
            { name: 'organizations', path: '../organizations.csv' },
            { name: 'taxonomies', path: 'https://example.org/taxonomies.csv' },
          ],
        }),
      });
      const unsafe = hsdsDatapackageSource(directory.path);
      assert.deepEqual(unsafe.files, []);
      const read = await readAll(unsafe);
      assert.deepEqual(
        read.diagnostics.errors.map(({ file, field }) => ({ file, field })),
        [
          { file: join(directory.path, 'datapackage.json'), field: 'resources[0].path' },
          { file: join(directory.path, 'datapackage.json'), field: 'resources[1].path' },
        ],
      );
      assert.deepEqual(read.organizations, []);
    } finally {
      directory.remove();
    }
  });
});
