import Type from 'typebox';

/**
 * TypeBox schemas of the documents this profile serves, for the OpenAPI document. They follow the
 * HSDS 3.0 schemas (vendor/hsds-3.0) and add this profile's fields; tests validate real responses
 * against the official schemas, not these.
 */

const Uuid = (description: string) => Type.String({ format: 'uuid', description });

export const Taxonomy = Type.Object(
  {
    id: Uuid('HSDS id: UUIDv5 of the taxonomy code (see the README).'),
    name: Type.String(),
    description: Type.String(),
    uri: Type.Optional(Type.String({ format: 'uri' })),
    version: Type.Optional(Type.String()),
    code: Type.String({ description: 'Native id of the taxonomy, e.g. `ntee`. Accepted by the `taxonomy` filter.' }),
  },
  { $id: 'Taxonomy', title: 'taxonomy' },
);

const termProperties = {
  id: Uuid('HSDS id: UUIDv5 of the taxonomy code and term code.'),
  code: Type.String({ description: 'Native id of the term within its taxonomy, e.g. `P20`.' }),
  name: Type.String(),
  description: Type.String({ description: 'Empty when the source has no description.' }),
  parent_id: Type.Optional(Uuid('The parent term, absent for a top-level term.')),
  taxonomy: Type.String({ description: 'Code of the taxonomy the term belongs to.' }),
  taxonomy_id: Uuid('Id of the taxonomy the term belongs to.'),
  term_uri: Type.Optional(Type.String({ format: 'uri' })),
};

const servedTermProperties = {
  ...termProperties,
  children_count: Type.Integer({ minimum: 0, description: 'How many terms have this one as parent; list them with `/taxonomy_terms?parent_id=`.' }),
};

/** A term nested in an organization's attribute: without `children_count`. */
export const NestedTaxonomyTerm = Type.Object(termProperties, { $id: 'NestedTaxonomyTerm', title: 'taxonomy_term (nested)' });

export const TaxonomyTerm = Type.Object(servedTermProperties, { $id: 'TaxonomyTerm', title: 'taxonomy_term' });

export const TaxonomyTermDetail = Type.Object(
  { ...servedTermProperties, taxonomy_detail: Type.Ref('Taxonomy') },
  { $id: 'TaxonomyTermDetail', title: 'taxonomy_term with taxonomy_detail' },
);

const Classification = Type.Object(
  {
    taxonomy: Type.String({ description: 'Taxonomy code, e.g. `ntee`.' }),
    taxonomy_id: Uuid('Id of the taxonomy.'),
    taxonomy_term_id: Uuid('Id of the term.'),
    code: Type.String({ description: 'Native code of the term.' }),
    name: Type.String({ description: 'Name of the term.' }),
  },
  { description: 'One taxonomy tag of the organization (this profile\'s compact form of an attribute).' },
);

const organizationProperties = {
  id: Uuid('HSDS id: UUIDv5 of the native id (see the README).'),
  name: Type.String(),
  alternate_name: Type.Optional(Type.String()),
  description: Type.String({ description: 'Empty when the source has none; never invented.' }),
  email: Type.Optional(Type.String({ format: 'email' })),
  website: Type.Optional(Type.String({ format: 'uri' })),
  tax_status: Type.Optional(Type.String({ description: 'For IRS organizations, the IRC subsection, e.g. `501(c)(3)`.' })),
  tax_id: Type.Optional(Type.String()),
  year_incorporated: Type.Optional(Type.Number()),
  legal_status: Type.Optional(Type.String()),
  uri: Type.Optional(Type.String({ format: 'uri' })),
  parent_organization_id: Type.Optional(Uuid('The parent organization, when it is published.')),
  external_identifier: Type.String({ description: 'The native id of the organization (for IRS organizations, the EIN).' }),
  classifications: Type.Array(Classification),
};

const lastModified = {
  last_modified: Type.String({
    format: 'date-time',
    description: 'When this server first published the organization as it is now (any change to its document counts). See `modified_after`.',
  }),
};

export const OrganizationListItem = Type.Object({ ...organizationProperties, ...lastModified }, {
  $id: 'OrganizationListItem',
  title: 'organization (list item)',
});

const Attribute = Type.Object({
  id: Uuid('UUIDv5 of the organization native id, taxonomy code and term code.'),
  link_id: Uuid('The organization.'),
  link_entity: Type.Literal('organization'),
  taxonomy_term_id: Uuid('The term.'),
  taxonomy_term: Type.Ref('NestedTaxonomyTerm'),
  label: Type.Optional(Type.String({ description: 'HSDS 3.1+: free-text label of the attribute, when the source has one.' })),
});

const Url = Type.Object({
  id: Uuid('UUIDv5 of the organization native id and the URL, unless the source gives an id.'),
  url: Type.String({ format: 'uri' }),
  label: Type.Optional(Type.String({ description: 'What the website is, e.g. `Donate`.' })),
  organization_id: Uuid('The organization.'),
});

const OrganizationIdentifier = Type.Object({
  id: Type.String({ format: 'uuid' }),
  organization_id: Type.String({ format: 'uuid' }),
  identifier_scheme: Type.String({ description: 'An org-id.guide list code, e.g. `US-EIN`.' }),
  identifier_type: Type.String(),
  identifier: Type.String(),
});

export const Organization = Type.Object(
  {
    ...organizationProperties,
    additional_websites: Type.Optional(Type.Array(Url, { description: 'HSDS 3.1+: websites besides `website`, when the source has any.' })),
    attributes: Type.Array(Attribute, { description: 'The tags in the standard HSDS form, one per classification.' }),
    organization_identifiers: Type.Array(OrganizationIdentifier),
    ...lastModified,
  },
  { $id: 'Organization', title: 'organization' },
);

export const documentSchemas = [Taxonomy, NestedTaxonomyTerm, TaxonomyTerm, TaxonomyTermDetail, OrganizationListItem, Organization];
