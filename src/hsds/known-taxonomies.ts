import type { TaxonomyRecord } from './records.ts';

/** The taxonomies of the code lists this project reads by name (the NTEE and Open Eligibility files in data/). */

export const NTEE_TAXONOMY: TaxonomyRecord = {
  code: 'ntee',
  name: 'National Taxonomy of Exempt Entities (NTEE-CC)',
  description:
    'The NTEE core codes used by the IRS and the National Center for Charitable Statistics to classify exempt organizations: 26 major groups (A-Z) and their three-character codes.',
  uri: 'https://github.com/Nonprofit-Open-Data-Collective/mission-taxonomies',
  version: 'NTEE-CC',
};

const ABOUT =
  'Open Eligibility v2.0, the open human services taxonomy by Aunt Bertha (now findhelp), CC BY-SA 3.0.';

export const OE_SERVICES_TAXONOMY: TaxonomyRecord = {
  code: 'oe_services',
  name: 'Open Eligibility: Human Services',
  description: `The services facet: what an organization or service provides (Food, Housing, Health, ...). ${ABOUT}`,
  uri: 'https://github.com/auntbertha/openeligibility',
  version: '2.0',
};

export const OE_SITUATIONS_TAXONOMY: TaxonomyRecord = {
  code: 'oe_situations',
  name: 'Open Eligibility: Human Situations',
  description: `The situations facet: who a service is for (age groups, veterans, disabilities, ...). ${ABOUT}`,
  uri: 'https://github.com/auntbertha/openeligibility',
  version: '2.0',
};
