import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { allItems } from '../helpers/app.ts';
import { importAndServe } from '../helpers/imports.ts';

/**
 * HSDS packages in the layouts of earlier versions and of 3.1+, written for this test in the shapes
 * the specification gives them (1.0: taxonomy.csv and services_taxonomy.csv, as Open211 Miami has
 * them; 1.1/2.0: taxonomy_terms.csv with `term`, service_attributes.csv, other_attributes.csv; 3.1:
 * url.csv). The real 1.x package is checked by test/external/open211-miami.check.ts.
 */



const byNativeId = async (app: FastifyInstance) => new Map((await allItems(app, '/organizations?full=true')).map((organization) => [organization.external_identifier, organization]));

const ORGANIZATIONS_V1 = [
  'id,name,alternate_name,description,email,url,tax_status,tax_id,year_incorporated,legal_status',
  '1,Food Bank,,Meals,,www.foodbank.example.org,,,,',
  '2,Shelter,,,,shelter.example.org/beds,,,,',
  '3,Clinic,,,,https://clinic.example.org/,,,,',
  '4,Library,,,,ourlibrary,,,,',
  '5,Legal Aid,,,,,,,,',
].join('\n');

describe('an HSDS 1.x package (taxonomy.csv, services_taxonomy.csv)', () => {
  const files = {
    // As 1.x templates ship it: resources named in the singular.
    'datapackage.json': JSON.stringify({
      name: 'human_services_data',
      version: '1.0',
      resources: [
        { name: 'organization', path: 'organizations.csv' },
        { name: 'service', path: 'services.csv' },
        { name: 'service_taxonomy', path: 'services_taxonomy.csv' },
        { name: 'taxonomy', path: 'taxonomy.csv' },
        { name: 'contact', path: 'contacts.csv' },
      ],
    }),
    'organizations.csv': ORGANIZATIONS_V1,
    'services.csv': 'id,organization_id,program_id,name,description,url\n10,1,,Pantry,,\n11,1,,Meals,,\n20,2,,Beds,,\n90,99,,Elsewhere,,\n',
    'services_taxonomy.csv': 'id,service_id,taxonomy_id,taxonomy_detail\n1,10,BD-1800,\n2,11,BD-1800,\n3,11,B,\n4,20,BH,\n5,90,B,\n6,20,ZZ-0000,\n',
    'taxonomy.csv': [
      'id,name,parent_id,parent_name,vocabulary,taxonomy_facet',
      'B,Basic Needs,,,Miami AIRS,Service',
      'BD-1800,Food Pantries,B,Basic Needs,Miami AIRS,Service',
      'BH,Housing,B,Basic Needs,Miami AIRS,',
      'BH,Housing (again),B,Basic Needs,Miami AIRS,',
    ].join('\n'),
    'locations.csv': 'id,organization_id,name\n1,1,Main\n',
  };

  it('serves websites with a scheme, the 1.x taxonomy with its parents, and tags of services on their organization', async () => {
    await importAndServe(files, async (app, run) => {
      assert.match(run.text, /read as HSDS 1\.x: organizations\.csv, taxonomy\.csv, services\.csv, services_taxonomy\.csv/);
      assert.match(run.text, /warning: 2 × website without http\(s\):\/\/, served with http:\/\//);
      assert.match(run.text, /\[url\]: "ourlibrary" is not an absolute http\(s\) URL; dropped/);
      assert.match(run.text, /taxonomy\.csv:5 \[id\]: BH is already the id of the term on line 4; this row is left out/);
      assert.match(run.text, /services_taxonomy\.csv:6 \[service_id\]: is linked to organization 99, which is not in the input; left out/);
      assert.match(run.text, /services_taxonomy\.csv:7 \[taxonomy_id\]: names term ZZ-0000, which is not in taxonomy\.csv; left out/);
      assert.match(run.text, /not read \(this API serves organizations and taxonomies only\): locations\.csv/);

      const organizations = await byNativeId(app);
      assert.deepEqual(
        ['1', '2', '3', '4', '5'].map((id) => organizations.get(id).website),
        ['http://www.foodbank.example.org', 'http://shelter.example.org/beds', 'https://clinic.example.org/', undefined, undefined],
      );
      const [taxonomy] = await allItems(app, '/taxonomies');
      assert.deepEqual([taxonomy.code, taxonomy.name], ['miami-airs', 'Miami AIRS']);
      const terms = await allItems(app, '/taxonomy_terms');
      const idOf = new Map(terms.map((term) => [term.code, term.id]));
      assert.deepEqual(
        terms.map((term) => [term.code, term.name, term.parent_id === undefined ? undefined : terms.find((parent) => parent.id === term.parent_id).code, term.children_count]),
        [
          ['B', 'Basic Needs', undefined, 2],
          ['BD-1800', 'Food Pantries', 'B', 0],
          ['BH', 'Housing', 'B', 0],
        ],
      );
      // Service 10 and 11 both carry BD-1800: one tag. The organization of service 90 is not in the package.
      assert.deepEqual(organizations.get('1').classifications.map((tag: { code: string }) => tag.code), ['BD-1800', 'B']);
      assert.deepEqual(organizations.get('2').classifications.map((tag: { code: string }) => tag.code), ['BH']);
      assert.equal(organizations.get('1').attributes[0].taxonomy_term_id, idOf.get('BD-1800'));
      const underBasicNeeds = await allItems(app, `/organizations?taxonomy_term_id=miami-airs:B`);
      assert.deepEqual(underBasicNeeds.map((organization) => organization.external_identifier), ['1']);
    });
  });
});

describe('an HSDS 1.1/2.0 package (taxonomy_terms with `term`, service_attributes, other_attributes)', () => {
  it('makes each `taxonomy` named by the terms a taxonomy, and tags organizations through their services and directly', async () => {
    await importAndServe(
      {
        'organizations.csv': ORGANIZATIONS_V1,
        'services.csv': 'id,organization_id,name\ns1,3,Checkups\n',
        'taxonomy_terms.csv': 'id,term,description,parent_id,taxonomy,language\nt1,Health,All health,,Open Eligibility,en\nt2,Checkups,,t1,Open Eligibility,en\nx1,Tuesday,,,Days,\n',
        'service_attributes.csv': 'id,service_id,taxonomy_term_id\na1,s1,t2\n',
        'other_attributes.csv': 'id,link_id,link_type,taxonomy_term_id\nb1,5,organization,t1\nb2,loc-1,location,x1\n',
      },
      async (app, run) => {
        assert.match(run.text, /read as HSDS 1\.1\/2\.0/);
        assert.match(run.text, /other_attributes\.csv:3 \[link_type\]: is "location", not "organization": skipped/);
        const taxonomies = await allItems(app, '/taxonomies');
        assert.deepEqual(taxonomies.map((taxonomy) => [taxonomy.code, taxonomy.name]), [['days', 'Days'], ['open-eligibility', 'Open Eligibility']]);
        const terms = await allItems(app, '/taxonomy_terms?taxonomy_id=open-eligibility');
        assert.deepEqual(terms.map((term) => [term.code, term.name, term.taxonomy, term.language]), [
          ['t1', 'Health', 'Open Eligibility', 'en'],
          ['t2', 'Checkups', 'Open Eligibility', 'en'],
        ]);
        assert.equal(terms[1].parent_id, terms[0].id);
        const organizations = await byNativeId(app);
        assert.deepEqual(organizations.get('3').classifications.map((tag: { code: string }) => tag.code), ['t2']);
        assert.deepEqual(organizations.get('5').classifications.map((tag: { code: string }) => tag.code), ['t1']);
      },
    );
  });
});

describe('an HSDS 3.1+ package: url.csv, attribute link_type, value and label, names in any case, resource paths as a list', () => {
  it('serves url rows as additional websites, and the attribute fields as given', async () => {
    await importAndServe(
      {
        'datapackage.json': JSON.stringify({
          resources: [
            { name: 'organization', path: ['Orgs-1.csv', 'orgs-2.csv'] },
            { name: 'url', path: 'url.csv' },
          ],
        }),
        'Orgs-1.csv': 'id,name,website\norg-1,One,https://one.example.org\n',
        'orgs-2.csv': 'id,name,website\norg-2,Two,\n',
        'url.csv': 'id,label,url,organization_id,service_id\nu1,Donate,https://one.example.org/donate,org-1,\nu2,,www.two.example.org,org-2,\nu3,Booking,https://book.example.org,,svc-1\n',
        'Taxonomies.CSV': 'id,name,description\ntx,Topics,\n',
        'TAXONOMY_TERMS.csv': 'id,code,name,description,taxonomy_id,taxonomy\ntm,food,Food,,tx,\nfree,urgent,Urgent,,,Flags\n',
        'attributes.csv': 'id,link_id,taxonomy_term_id,link_type,link_entity,value,label\nat1,org-1,tm,topic,organization,main,Main topic\nat2,org-2,free,,organization,,\n',
      },
      async (app, run) => {
        assert.match(run.text, /note: 1 × website of a service \(not served\)/);
        const organizations = await byNativeId(app);
        assert.deepEqual(
          organizations.get('org-1').additional_websites.map(({ url, label }: { url: string; label?: string }) => [url, label]),
          [['https://one.example.org/donate', 'Donate']],
        );
        assert.deepEqual(organizations.get('org-2').additional_websites.map(({ url }: { url: string }) => url), ['http://www.two.example.org']);
        const [attribute] = organizations.get('org-1').attributes;
        assert.deepEqual([attribute.link_type, attribute.value, attribute.label], ['topic', 'main', 'Main topic']);
        // A term of no taxonomy (HSDS makes taxonomy_id optional) is served, and tags as any other.
        const [untaxed] = organizations.get('org-2').classifications;
        assert.deepEqual([untaxed.code, untaxed.taxonomy, untaxed.taxonomy_id], ['urgent', undefined, undefined]);
        assert.equal(organizations.get('org-2').attributes[0].taxonomy_term.taxonomy, 'Flags');
        const urgent = await allItems(app, '/taxonomy_terms?search=urgent');
        assert.deepEqual(urgent.map((term) => [term.name, term.taxonomy, term.taxonomy_id]), [['Urgent', 'Flags', undefined]]);
      },
    );
  });
});
