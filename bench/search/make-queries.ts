/**
 * Builds the judged query set of the search bench from the IRS files in data/ (never from the API's
 * answers) and writes bench/search/queries.json. Deterministic: the same data and seed give the same
 * file. The method is in bench/search/README.md.
 *
 *   node bench/search/make-queries.ts [--seed S] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Random } from '../lib/random.ts';
import { parseInteger } from '../lib/run.ts';
import { grade, normalise, readOrganizations } from './data.ts';
import type { Organization, TopicRule } from './data.ts';

const { values } = parseArgs({
  options: { seed: { type: 'string', default: '18' }, out: { type: 'string', default: join(import.meta.dirname, 'queries.json') } },
});
const seed = parseInteger('seed', values.seed!, 0, 0xffffffff);

/** Known items are drawn from organizations this large: people look up what they have heard of. */
const MIN_REVENUE = 1_000_000;
const MIN_WORDS = 2;
const MAX_WORDS = 7;
/** The same for every variant: how often people type each way is not known, so the overall figure is a plain mean. */
const PER_VARIANT = 13;

/** Words that carry no identity: left out of a name's key, and what the `filler` variant drops. */
const FILLER = new Set(['the', 'of', 'and', 'a', 'an', 'inc', 'incorporated', 'corp', 'corporation', 'llc', 'ltd']);
const KEY_STOP = new Set([...FILLER, 'for', 'in', 'at', 'on', 'to', 'co']);
const LEGAL_SUFFIX = new Set(['inc', 'incorporated', 'corp', 'corporation', 'llc', 'ltd']);

/** Acronyms people type for a long form found in IRS names (in normal form). */
const ACRONYMS: Record<string, string> = {
  'young mens christian association': 'ymca',
  'young womens christian association': 'ywca',
  'veterans of foreign wars': 'vfw',
  'parent teacher association': 'pta',
  'parent teacher organization': 'pto',
  'parent teacher student association': 'ptsa',
  'fraternal order of police': 'fop',
  'benevolent and protective order of elks': 'bpoe',
  'international brotherhood of electrical workers': 'ibew',
  'american association of university women': 'aauw',
  'national association for the advancement of colored people': 'naacp',
  'society for the prevention of cruelty to animals': 'spca',
  'disabled american veterans': 'dav',
  'court appointed special advocates': 'casa',
  'national alliance on mental illness': 'nami',
  'mothers against drunk driving': 'madd',
  'future farmers of america': 'ffa',
};

/** IRS names drop the apostrophe; people type it. A word ending in S is possessive when listed here, or after ST. */
const POSSESSIVES = new Set(['womens', 'childrens', 'mens', 'peoples', 'alzheimers', 'parkinsons']);
const SAINTS = new Set(
  'marys johns pauls peters lukes marks josephs andrews michaels annes anns patricks judes brigids bridgets catherines elizabeths matthews stephens georges albans davids anthonys vincents monicas theresas teresas lawrences augustines benedicts bernards cecilias edwards gabriels helens jeromes margarets martins philips raphaels ritas roses timothys francis'
    .split(' ')
    .filter((word) => word.endsWith('s') && !word.endsWith('is')),
);

const STATES = new Set(
  'alabama alaska arizona arkansas california colorado connecticut delaware florida georgia hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota mississippi missouri montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont virginia washington wisconsin wyoming guam'
    .split(' ')
    .concat(['new hampshire', 'new jersey', 'new mexico', 'new york', 'north carolina', 'north dakota', 'rhode island', 'south carolina', 'south dakota', 'west virginia', 'district of columbia', 'puerto rico', 'virgin islands']),
);
const REGION = /^(?:(?:greater|northern|southern|eastern|western|central|north|south|east|west|northeast|northwest|southeast|southwest|upper|lower|mid) )*(.+)$/;
/** Cities of at least this many organizations in the files count as places people type first. */
const MIN_CITY_ORGANIZATIONS = 10;

const withAcronymsExpanded = (text: string): string =>
  Object.entries(ACRONYMS).reduce((result, [long, short]) => ` ${result} `.replaceAll(` ${short} `, ` ${long} `).trim(), text);

/** What a name is about, whatever the spelling: its words in normal form, acronyms expanded, filler dropped, as a set. */
const nameKey = (text: string): string =>
  [...new Set(withAcronymsExpanded(normalise(text)).split(' ').filter((word) => word !== '' && !KEY_STOP.has(word)))].sort().join(' ');

/** The name as someone types it: lower case, `&` kept, other punctuation a space. */
const typed = (name: string): string[] => name.toLowerCase().replace(/['’]/g, '').replace(/[^a-z0-9&]+/g, ' ').trim().split(' ');
const withoutSuffix = (words: string[]): string[] => (words.length > 1 && LEGAL_SUFFIX.has(words.at(-1)!) ? words.slice(0, -1) : words);
const isWord = (word: string): boolean => /^[a-z]+$/.test(word);

/** Neighbouring keys on a QWERTY keyboard, for substitution typos. */
const KEY_ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];
function neighbours(letter: string): string {
  const row = KEY_ROWS.find((keys) => keys.includes(letter))!;
  const at = row.indexOf(letter);
  return row.slice(Math.max(0, at - 1), at) + row.slice(at + 1, at + 2);
}

/** One typo at a position after the first letter: a letter left out, doubled, swapped with the next, or its keyboard neighbour. */
function typo(word: string, random: Random): string {
  const at = 1 + random.below(word.length - 1);
  switch (random.below(4)) {
    case 0:
      return word.slice(0, at) + word.slice(at + 1);
    case 1:
      return word.slice(0, at) + word[at] + word.slice(at);
    case 2:
      if (at < word.length - 1 && word[at] !== word[at + 1]) return word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2);
    // falls through: the last letter, or two alike, has nothing to swap with
    default: {
      const choices = neighbours(word[at]!);
      return word.slice(0, at) + choices[random.below(choices.length)] + word.slice(at + 1);
    }
  }
}

interface Variant {
  name: string;
  /** How the query differs from the name, for the README. */
  rule: string;
  count: number;
  /** The query for this organization, or undefined when the variant does not apply to its name. */
  make: (organization: Organization, random: Random) => string | undefined;
}

const VARIANTS: Variant[] = [
  { name: 'lower', rule: 'the name in lower case, as written (punctuation kept)', count: PER_VARIANT, make: (o) => o.name.toLowerCase() },
  {
    name: 'punctuation',
    rule: 'a name with punctuation other than & (mostly hyphens), each mark typed as a space',
    count: PER_VARIANT,
    make: (o) => (/[^A-Za-z0-9 &]/.test(o.name) ? typed(o.name).join(' ') : undefined),
  },
  {
    name: 'ampersand',
    rule: '& typed as "and", or "and" typed as & (the direction drawn at random)',
    count: PER_VARIANT,
    make: (o, random) => {
      const words = typed(o.name);
      const from = random.below(2) === 0 ? '&' : 'and';
      if (!words.includes(from)) return undefined;
      return words.map((word) => (word === from ? (from === '&' ? 'and' : '&') : word)).join(' ');
    },
  },
  {
    name: 'typo',
    rule: 'one typo in a word of 6 or more letters, never in its first letter',
    count: PER_VARIANT,
    make: (o, random) => {
      const words = typed(o.name);
      const long = words.flatMap((word, index) => (isWord(word) && word.length >= 6 ? [index] : []));
      if (long.length === 0) return undefined;
      const index = long[random.below(long.length)]!;
      return words.map((word, i) => (i === index ? typo(word, random) : word)).join(' ');
    },
  },
  {
    name: 'prefix',
    rule: 'a legal suffix (inc, corp, llc...) left out, and the last word (5+ letters) cut after 3 or more letters, at least 2 short',
    count: PER_VARIANT,
    make: (o, random) => {
      const words = withoutSuffix(typed(o.name));
      const last = words.at(-1)!;
      if (words.length < 2 || !isWord(last) || last.length < 5) return undefined;
      return [...words.slice(0, -1), last.slice(0, 3 + random.below(last.length - 4))].join(' ');
    },
  },
  {
    name: 'swap',
    rule: `"(the) A of (the) P" typed "P A" when P is a place: a state, a city of ${MIN_CITY_ORGANIZATIONS}+ organizations in the files, or a county or parish, maybe after greater, northern, mid...; a legal suffix left out`,
    count: PER_VARIANT,
    make: (o) => {
      const words = withoutSuffix(typed(o.name));
      // The first "of" that a place follows: "district of columbia" is one place.
      for (let of = words.indexOf('of'); of !== -1; of = words.indexOf('of', of + 1)) {
        const after = words.slice(of + 1).filter((word, i) => !(i === 0 && word === 'the'));
        const before = words.slice(words[0] === 'the' ? 1 : 0, of);
        if (before.length >= 1 && after.length >= 1 && isPlace(after.join(' '))) return [...after, ...before].join(' ');
      }
      return undefined;
    },
  },
  {
    name: 'filler',
    rule: `filler words left out (${[...FILLER].join(', ')}, &)`,
    count: PER_VARIANT,
    make: (o) => {
      const words = typed(o.name);
      const kept = words.filter((word) => !FILLER.has(word) && word !== '&');
      return kept.length < words.length && kept.length >= 2 ? kept.join(' ') : undefined;
    },
  },
  {
    name: 'apostrophe',
    rule: `possessives typed with an apostrophe (${[...POSSESSIVES].join(', ')}, and a saint's name after "st": st mary's)`,
    count: PER_VARIANT,
    make: (o) => {
      const words = typed(o.name);
      const query = words.map((word, i) => (POSSESSIVES.has(word) || (SAINTS.has(word) && (words[i - 1] === 'st' || words[i - 1] === 'saint')) ? `${word.slice(0, -1)}'s` : word));
      return query.some((word, i) => word !== words[i]) ? query.join(' ') : undefined;
    },
  },
  {
    name: 'acronym',
    rule: `a long form typed as its acronym (${Object.values(ACRONYMS).join(', ')})`,
    count: PER_VARIANT,
    make: (o) => {
      const name = normalise(o.name);
      const query = Object.entries(ACRONYMS).reduce((result, [long, short]) => ` ${result} `.replace(` ${long} `, ` ${short} `).trim(), name);
      return query === name ? undefined : query;
    },
  },
];

/** Topics, each with its relevance rule (data.ts: 1 for the NTEE code, 1 for a phrase in a name). */
const TOPICS: { query: string; rule: TopicRule }[] = [
  { query: 'food bank', rule: { ntee: ['K31'], phrases: ['food bank', 'foodbank', 'food pantry'] } },
  { query: 'fod bank', rule: { ntee: ['K31'], phrases: ['food bank', 'foodbank', 'food pantry'] } },
  { query: 'domestic violence', rule: { ntee: ['P43', 'I71'], phrases: ['domestic violence', 'domestic abuse', 'family violence', 'battered women'] } },
  { query: "women's shelter", rule: { ntee: ['P43', 'I71'], phrases: ['womens shelter', 'womens crisis', 'womens resource center', 'domestic violence', 'safe house'] } },
  { query: 'animal shelter', rule: { ntee: ['D20'], phrases: ['animal shelter', 'humane society', 'animal rescue', 'spca', 'animal welfare'] } },
  { query: 'youth soccer', rule: { ntee: ['N64'], phrases: ['youth soccer', 'junior soccer', 'soccer club', 'soccer association', 'soccer league'] } },
  { query: 'volunteer fire department', rule: { ntee: ['M24'], phrases: ['volunteer fire', 'vol fire', 'fire department', 'fire dept', 'fire company', 'vfd'] } },
  { query: 'homeless shelter', rule: { ntee: ['L41', 'P85'], phrases: ['homeless', 'rescue mission'] } },
  { query: 'habitat for humanity', rule: { ntee: [], phrases: ['habitat for humanity'] } },
  { query: 'habitat for hum', rule: { ntee: [], phrases: ['habitat for humanity'] } },
  { query: 'boys and girls club', rule: { ntee: ['O23'], phrases: ['boys and girls club', 'boys and girls clubs'] } },
  { query: 'big brothers big sisters', rule: { ntee: ['O31'], phrases: ['big brothers', 'big sisters'] } },
  { query: 'child care', rule: { ntee: ['P33'], phrases: ['child care', 'childcare', 'day care', 'daycare', 'child development center'] } },
  { query: 'childcare', rule: { ntee: ['P33'], phrases: ['child care', 'childcare', 'day care', 'daycare', 'child development center'] } },
  { query: 'adult literacy', rule: { ntee: ['B92'], phrases: ['literacy'] } },
  { query: 'mental health', rule: { ntee: ['F30', 'F32', 'F33', 'F70', 'F80'], phrases: ['mental health', 'behavioral health'] } },
  { query: 'addiction recovery', rule: { ntee: ['F20', 'F21', 'F22'], phrases: ['addiction', 'recovery', 'substance abuse', 'sober'] } },
  { query: 'hospice', rule: { ntee: ['P74'], phrases: ['hospice'] } },
  { query: 'free clinic', rule: { ntee: ['E30', 'E32'], phrases: ['free clinic', 'community clinic', 'health clinic', 'community health center'] } },
  { query: 'senior center', rule: { ntee: ['P81'], phrases: ['senior center', 'senior citizens center', 'senior citizen center', 'council on aging'] } },
  { query: 'veterans', rule: { ntee: ['W30'], phrases: ['veterans', 'vfw', 'american legion', 'amvets'] } },
  { query: 'museum', rule: { ntee: ['A50', 'A51', 'A52', 'A53', 'A54', 'A56', 'A57'], phrases: ['museum'] } },
  { query: 'historical society', rule: { ntee: ['A80', 'A82'], phrases: ['historical society', 'historic preservation'] } },
  { query: 'pta', rule: { ntee: ['B94'], phrases: ['pta', 'pto', 'ptsa', 'ptso', 'parent teacher'] } },
  { query: 'scholarship fund', rule: { ntee: ['B82'], phrases: ['scholarship', 'scholarships'] } },
  { query: 'cancer support', rule: { ntee: ['G30', 'G32'], phrases: ['cancer'] } },
  { query: 'autism', rule: { ntee: ['G84', 'H84'], phrases: ['autism', 'autistic'] } },
  { query: 'disaster relief', rule: { ntee: ['M20'], phrases: ['disaster'] } },
  { query: 'refugee services', rule: { ntee: ['Q71', 'P84', 'R21'], phrases: ['refugee', 'refugees', 'immigrant', 'immigrants'] } },
  { query: 'legal aid', rule: { ntee: ['I80'], phrases: ['legal aid', 'legal services', 'legal assistance'] } },
  { query: 'community foundation', rule: { ntee: ['T31'], phrases: ['community foundation'] } },
  { query: 'little league baseball', rule: { ntee: ['N63'], phrases: ['little league', 'baseball'] } },
  { query: '4h club', rule: { ntee: ['O52'], phrases: ['4 h', '4h', 'four h'] } },
  { query: "alzheimer's", rule: { ntee: ['G83', 'H83'], phrases: ['alzheimers', 'dementia'] } },
  { query: 'public library', rule: { ntee: ['B70'], phrases: ['library', 'libraries'] } },
  { query: 'symphony orchestra', rule: { ntee: ['A69'], phrases: ['symphony', 'orchestra', 'philharmonic'] } },
];

const organizations = await readOrganizations();

const holders = new Map<string, number>();
for (const organization of organizations) {
  const keys = new Set([organization.name, organization.alternateName].filter((name) => name !== undefined).map(nameKey));
  for (const key of keys) holders.set(key, (holders.get(key) ?? 0) + 1);
}
const cityCounts = new Map<string, number>();
for (const organization of organizations) cityCounts.set(normalise(organization.city), (cityCounts.get(normalise(organization.city)) ?? 0) + 1);
function isPlace(words: string): boolean {
  const place = REGION.exec(words)![1]!;
  return STATES.has(place) || (cityCounts.get(place) ?? 0) >= MIN_CITY_ORGANIZATIONS || /^[a-z ]+ (county|parish)$/.test(place);
}
const wordCount = (name: string) => normalise(name).split(' ').length;
// Sorted by EIN, so the draw does not depend on the order of the files.
const pool = organizations
  .filter((o) => o.revenue >= MIN_REVENUE && wordCount(o.name) >= MIN_WORDS && wordCount(o.name) <= MAX_WORDS && holders.get(nameKey(o.name)) === 1)
  .sort((a, b) => (a.ein < b.ein ? -1 : 1));

const random = new Random(seed);
const used = new Set<string>();
const known = VARIANTS.flatMap((variant) => {
  const picked = [];
  const candidates = pool.filter((o) => !used.has(o.ein));
  while (picked.length < variant.count && candidates.length > 0) {
    const [organization] = candidates.splice(random.below(candidates.length), 1);
    const query = variant.make(organization!, random);
    if (query === undefined || normalise(query) === '') continue;
    used.add(organization!.ein);
    picked.push({ variant: variant.name, query, ein: organization!.ein, name: organization!.name, ...(organization!.alternateName === undefined ? {} : { alternate_name: organization!.alternateName }) });
  }
  if (picked.length < variant.count) throw new Error(`only ${picked.length} names fit variant ${variant.name}`);
  return picked;
});

const topics = TOPICS.map(({ query, rule }) => {
  const relevant: Record<string, number> = {};
  for (const organization of organizations) {
    const g = grade(rule, organization);
    if (g > 0) relevant[organization.ein] = g;
  }
  const grades = Object.values(relevant);
  return { query, rule, grade_2: grades.filter((g) => g === 2).length, grade_1: grades.filter((g) => g === 1).length };
});

const file = {
  about: 'Judged queries of the search bench, made by bench/search/make-queries.ts from data/irs-eo-bmf (see bench/search/README.md). Do not edit by hand.',
  seed,
  organizations: organizations.length,
  known_item_rule: {
    pool: `organizations with REVENUE_AMT >= ${MIN_REVENUE}, a NAME of ${MIN_WORDS} to ${MAX_WORDS} words, and a name key (normal form, acronyms expanded, words ${[...KEY_STOP].join(', ')} dropped, as a set) that no other organization's NAME or served alternate name has`,
    pool_size: pool.length,
    variants: Object.fromEntries(VARIANTS.map((variant) => [variant.name, variant.rule])),
  },
  topic_rule: 'relevance = 1 if the NTEE code is listed + 1 if the name or alternate name (normal form) holds a listed phrase as whole words; with no NTEE code listed, a phrase gives 2. Counted again from the data by run.ts.',
  known,
  topics,
};
writeFileSync(values.out!, `${JSON.stringify(file, null, 1)}\n`);
process.stderr.write(`Wrote ${values.out}: ${known.length} known items (from a pool of ${pool.length}) and ${topics.length} topics.\n`);
