/**
 * What the search bench reads from the IRS files in data/, shared by make-queries.ts (which judges
 * the queries) and run.ts (which indexes the same names in MiniSearch): the organizations, the
 * normal form names are compared in, and the relevance rule of a topic.
 */
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { sortNameOmission } from '../../src/sources/irs-sort-name.ts';

export interface Organization {
  ein: string;
  name: string;
  /** SORT_NAME when the API serves it as alternate_name (the importer's own rule). */
  alternateName: string | undefined;
  /** The NTEE code as the API tags it: the first three characters of NTEE_CD. */
  ntee: string | undefined;
  revenue: number;
  city: string;
}

export const IRS_DIR = join(import.meta.dirname, '..', '..', 'data', 'irs-eo-bmf');

/** Every organization of the IRS state files, in file order then row order. */
export async function readOrganizations(directory = IRS_DIR): Promise<Organization[]> {
  const files = readdirSync(directory).filter((file) => /^eo.*\.csv\.gz$/.test(file)).sort();
  const organizations: Organization[] = [];
  for (const file of files) {
    const rows = createReadStream(join(directory, file)).pipe(createGunzip()).pipe(parse({ columns: true, bom: true }));
    for await (const row of rows as AsyncIterable<Record<string, string>>) {
      const name = row.NAME!.trim().normalize('NFC');
      const sortName = row.SORT_NAME!.trim().normalize('NFC');
      const ntee = row.NTEE_CD!.trim().slice(0, 3).toUpperCase();
      organizations.push({
        ein: row.EIN!.trim(),
        name,
        alternateName: sortName !== '' && sortNameOmission(sortName, name) === undefined ? sortName : undefined,
        ntee: ntee === '' ? undefined : ntee,
        revenue: Number(row.REVENUE_AMT || 0),
        city: row.CITY!.trim(),
      });
    }
  }
  return organizations;
}

/** Lower case, apostrophes dropped (WOMENS = women's), `&` as "and", any other punctuation a space. */
export function normalise(text: string): string {
  return ` ${text.toLowerCase()} `
    .replace(/['’]/g, '')
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/**
 * A topic's relevance rule. With NTEE codes, an organization tagged with one of them gets 1 and
 * one whose name or alternate name holds one of the phrases gets 1, added up (2 for both). Without
 * NTEE codes (a named network such as Habitat for Humanity) a phrase alone gives 2.
 */
export interface TopicRule {
  ntee: string[];
  /** In normal form; matched as whole words of the normalised name. */
  phrases: string[];
}

export function grade(rule: TopicRule, organization: Organization): number {
  const names = [organization.name, organization.alternateName].filter((name) => name !== undefined).map((name) => ` ${normalise(name)} `);
  const named = rule.phrases.some((phrase) => names.some((name) => name.includes(` ${phrase} `)));
  if (rule.ntee.length === 0) return named ? 2 : 0;
  return (organization.ntee !== undefined && rule.ntee.includes(organization.ntee) ? 1 : 0) + (named ? 1 : 0);
}

/**
 * A need's relevance rule (bench/search/needs.json): the NTEE code alone, chosen from the codes'
 * NCCS definitions and keywords. An organization gets 2 when its code is in grade2 (its primary
 * purpose meets the need), 1 when it is in grade1 (closely related), else 0. Codes are compared
 * whole, as three characters: no major group or shorter prefix (see the README, Needs).
 */
export interface NeedRule {
  grade2: string[];
  grade1: string[];
}

export function needGrade(rule: NeedRule, organization: Organization): number {
  if (organization.ntee === undefined) return 0;
  return rule.grade2.includes(organization.ntee) ? 2 : rule.grade1.includes(organization.ntee) ? 1 : 0;
}

/** A query of needs.json: written by hand, with the counts count-needs.ts wrote. */
export interface Need extends NeedRule {
  query: string;
  language: 'en' | 'es';
  /** A short name of the need, to read results by. */
  need: string;
  /** Which definitions make each code relevant. */
  reason: string;
  organizations?: { grade2: number; grade1: number };
}

export interface NeedSet {
  about: string;
  rule: string;
  /** How many organizations data/ held when the counts were made. */
  organizations?: number;
  needs: Need[];
}
