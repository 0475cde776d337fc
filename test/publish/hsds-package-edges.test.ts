import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { missingTermId } from '../../src/hsds/ids.ts';
import { allItems } from '../helpers/app.ts';
import { importAndServe } from '../helpers/imports.ts';

/**
 * Packages written for this test, each the smallest that shows one way an HSDS package found in the
 * wild is laid out or refers outside itself, imported and read back through the API.
 */


const ORGANIZATIONS = 'id,name\no1,Org One\n';

describe('HSDS packages as found', () => {
  it('reads a 1.x taxonomy.csv of only id and name as terms, not as taxonomies', async () => {
    await importAndServe(
      {
        'organizations.csv': 'id,name,url\no1,Org One,one.example.org\n',
        'services.csv': 'id,organization_id\ns1,o1\n',
        'services_taxonomy.csv': 'id,service_id,taxonomy_id\n1,s1,B\n',
        'taxonomy.csv': 'id,name\nA,Alpha\nB,Beta\n',
      },
      async (app) => {
        assert.deepEqual((await allItems(app, '/taxonomy_terms')).map((term) => term.code), ['A', 'B']);
        const [organization] = await allItems(app, '/organizations');
        assert.deepEqual(organization.classifications.map((tag: { code: string }) => tag.code), ['B']);
      },
    );
  });

  it('finds a datapackage.json path in any case, and falls back to the default name when the listed file is not there, with a note', async () => {
    await importAndServe(
      {
        'datapackage.json': JSON.stringify({
          resources: [
            { name: 'organization', path: 'ORGS.csv' },
            { name: 'taxonomy_term', path: 'terms.csv' },
            { name: 'taxonomy', path: 'vocabularies.csv' },
          ],
        }),
        'orgs.csv': ORGANIZATIONS,
        'Terms.csv': 'id,name,taxonomy_id\nt1,Food,tx\n',
        'taxonomies.csv': 'id,name,description\ntx,Topics,\n',
      },
      async (app, run) => {
        assert.match(run.text, /datapackage\.json \[resources\[2\]\.path\]: lists vocabularies\.csv, which is not in the folder/);
        assert.doesNotMatch(run.text, /file not read/);
        const [term] = await allItems(app, '/taxonomy_terms');
        assert.equal(term.taxonomy_id, (await allItems(app, '/taxonomies'))[0].id);
        assert.equal((await allItems(app, '/organizations'))[0].name, 'Org One');
      },
    );
  });

  it('serves a parent in another taxonomy, and a parent naming no term, as given; never a term whose code equals the missing id', async () => {
    await importAndServe(
      {
        'organizations.csv': ORGANIZATIONS,
        'taxonomies.csv': 'id,name,description\ntx,Topics,\nty,Others,\n',
        'taxonomy_terms.csv': 'id,code,name,taxonomy_id,parent_id\nt1,K,Alpha,tx,\nt2,B,Beta,tx,K\nt3,C,Gamma,ty,t1\nt4,D,Delta,,t1\n',
      },
      async (app, run) => {
        assert.match(run.text, /warning: 3 × term whose parent is not in its taxonomy in the package/);
        const terms = new Map((await allItems(app, '/taxonomy_terms')).map((term) => [term.code, term]));
        // t2's parent_id "K" names no term id (K is t1's code): an id derived from it, not t1's.
        assert.equal(terms.get('B').parent_id, missingTermId('tx', 'K'));
        assert.notEqual(terms.get('B').parent_id, terms.get('K').id);
        assert.equal(terms.get('K').children_count, 2);
        // t3 (another taxonomy) and t4 (no taxonomy) name t1: its id.
        assert.equal(terms.get('C').parent_id, terms.get('K').id);
        assert.equal(terms.get('D').parent_id, terms.get('K').id);
      },
    );
  });

  it('keeps terms of different taxonomies outside the package apart, though their codes are equal', async () => {
    await importAndServe(
      {
        'organizations.csv': ORGANIZATIONS,
        'taxonomy_terms.csv': 'id,code,name,taxonomy_id\nu1,1102,Food,ext-oe\nu2,1102,Housing,ext-other\n',
        'attributes.csv': 'id,link_id,taxonomy_term_id,link_entity\na1,o1,u2,organization\n',
      },
      async (app) => {
        const terms = await allItems(app, '/taxonomy_terms');
        assert.deepEqual(terms.map((term) => term.name), ['Food', 'Housing']);
        assert.notEqual(terms[0].taxonomy_id, terms[1].taxonomy_id);
        const [organization] = await allItems(app, '/organizations');
        assert.deepEqual(organization.classifications.map((tag: { name: string }) => tag.name), ['Housing']);
      },
    );
  });

  it('matches 1.x ids that are UUIDs in any case, and keeps them', async () => {
    const id = '3F7B145D-84AF-42D7-8FAE-EACA714B02B2';
    await importAndServe(
      {
        'organizations.csv': ORGANIZATIONS,
        'services.csv': 'id,organization_id\ns1,o1\n',
        'services_taxonomy.csv': `id,service_id,taxonomy_id\n1,s1,${id.toLowerCase()}\n`,
        'taxonomy.csv': `id,name,parent_id,vocabulary\n${id},Food,,AIRS\n`,
      },
      async (app) => {
        const [term] = await allItems(app, '/taxonomy_terms');
        assert.equal(term.id, id.toLowerCase());
        const [organization] = await allItems(app, '/organizations');
        assert.deepEqual(organization.classifications.map((tag: { taxonomy_term_id: string }) => tag.taxonomy_term_id), [id.toLowerCase()]);
      },
    );
  });

  it('reads gzipped tables by their default names, and minds no case twins among files it does not read', async () => {
    await importAndServe(
      {
        'Organizations.csv.gz': gzipSync(ORGANIZATIONS),
        'taxonomies.csv': 'id,name,description\ntx,Topics,\n',
        'taxonomy_terms.csv.gz': gzipSync('id,name,taxonomy_id\nt1,Food,tx\n'),
        'README.md': '# One\n',
        'readme.md': '# Two\n',
      },
      async (app, run) => {
        assert.match(run.text, /read as HSDS 3\.x: Organizations\.csv\.gz, taxonomies\.csv, taxonomy_terms\.csv\.gz/);
        assert.equal((await allItems(app, '/taxonomy_terms')).length, 1);
      },
    );
  });

  it('tells a native folder with a stray HSDS file from a package by its status column, and a 3.x package of shared names by its lack of one', async () => {
    await importAndServe(
      {
        'organizations.csv': 'id,name,status\nn1,Native One,published\n',
        'services.csv': 'id,organization_id\ns1,n1\n',
      },
      async (app, run) => {
        assert.match(run.text, /services\.csv: not read/);
        assert.doesNotMatch(run.text, /HSDS package read/);
        assert.equal((await allItems(app, '/organizations'))[0].name, 'Native One');
      },
    );
    await importAndServe(
      {
        'organizations.csv': 'id,name,website\no1,Org One,https://one.example.org\n',
        'url.csv': 'id,url,organization_id\nu1,https://two.example.org,o1\n',
      },
      async (app, run) => {
        assert.match(run.text, /read as HSDS 3\.1 or later/);
        assert.equal((await allItems(app, '/organizations?full=true'))[0].additional_websites[0].url, 'https://two.example.org');
      },
    );
  });
});
