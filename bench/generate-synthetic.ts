/**
 * Generates a deterministic synthetic dataset in the project's native CSV format, for the import
 * benchmark (bench/import.ts):
 *
 *   organizations.csv       id,name,status,alternate_name,description,email,website,tax_status,tax_id,
 *                           year_incorporated,legal_status,uri,parent_id
 *   organization_tags.csv   organization_id,taxonomy,term_code
 *
 * Value distributions come from the real data in data/: the IRS EO BMF extracts (name words and word
 * counts, repeated chapter names, SORT_NAME share and shape, SUBSECTION, ORGANIZATION, RULING year and
 * NTEE code frequencies), the NTEE definitions (descriptions) and the Open Eligibility terms. Everything
 * derived is put in a canonical order, and all randomness comes from a seeded sfc32 generator, so the
 * same seed and the same data give byte-identical files. Output is streamed with back-pressure:
 * memory does not grow with --organizations.
 *
 * Usage: node bench/generate-synthetic.ts [--organizations N] [--seed S] [--name-suffix TEXT] --out DIR
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { Random } from './lib/random.ts';
import { parseInteger, runMain } from './lib/run.ts';
import type { Readable, Writable } from 'node:stream';

const USAGE = `Usage: node bench/generate-synthetic.ts [--organizations N] [--seed S] [--name-suffix TEXT] --out DIR

Writes DIR/organizations.csv and DIR/organization_tags.csv (native format), deterministic for a given
seed and data/ directory.

Options:
  --organizations N   number of organizations (default 2000000)
  --seed S            PRNG seed, an integer from 0 to 4294967295 (default 1)
  --name-suffix TEXT  appended to every organization's name: a second edition of the same dataset,
                      told apart from the first in every response (bench/faults.ts)
  --out DIR           output directory (created when missing; existing files are overwritten)
  --help              print this help`;

const DATA_DIR = resolve(import.meta.dirname, '..', 'data');

/** Shares that the real data cannot supply (the BMF has no such fields); chosen for the benchmark. */
const UNPUBLISHED_SHARE = 0.02;
const DESCRIPTION_SHARE = 0.25;
const TWO_SENTENCE_SHARE = 0.35;
/** Of two-sentence descriptions, the share whose sentences are separated by a line break (quoted newline). */
const MULTILINE_SHARE = 0.2;
const EMAIL_SHARE = 0.08;
const WEBSITE_SHARE = 0.15;
const PARENT_SHARE = 0.01;
const OE_SHARE = 0.2;
/** How many Open Eligibility tags an organization with any gets: 1, 2 or 3. */
const OE_TAG_COUNT_WEIGHTS = [0.6, 0.3, 0.1] as const;

const ORGANIZATION_HEADER =
  'id,name,status,alternate_name,description,email,website,tax_status,tax_id,year_incorporated,legal_status,uri,parent_id\n';
const TAG_HEADER = 'organization_id,taxonomy,term_code\n';

const LEGAL_STATUS: Record<string, string> = { '1': 'Corporation', '2': 'Trust', '3': 'Co-operative', '4': 'Partnership', '5': 'Association' };
const OE_TAXONOMY_BY_FACET: Record<string, string> = { services: 'oe_services', situations: 'oe_situations' };

function compare<T extends string | number>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A discrete distribution; values are in a canonical order (by key), so picks do not depend on read order. */
class Weighted<T extends string | number> {
  readonly values: T[];
  readonly total: number;
  private readonly cumulative: Float64Array;

  constructor(counts: ReadonlyMap<T, number>) {
    this.values = [...counts.keys()].filter((key) => counts.get(key)! > 0).sort(compare);
    if (this.values.length === 0) throw new Error('empty distribution');
    this.cumulative = new Float64Array(this.values.length);
    let sum = 0;
    this.values.forEach((value, index) => {
      sum += counts.get(value)!;
      this.cumulative[index] = sum;
    });
    this.total = sum;
  }

  pick(random: Random): T {
    const x = random.float() * this.total;
    let low = 0;
    let high = this.values.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.cumulative[middle]! > x) high = middle;
      else low = middle + 1;
    }
    return this.values[low]!;
  }
}

function increment<T>(counts: Map<T, number>, key: T, by = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}

// ---------------------------------------------------------------------------------------------------
// The model derived from the real data

/** Names as word sequences: word count, then the first, middle and last words by position. */
class NameModel {
  private readonly wordCounts = new Map<number, number>();
  private readonly solo = new Map<string, number>();
  private readonly first = new Map<string, number>();
  private readonly middle = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private maxLength = 0;

  add(value: string): void {
    const words = value.split(' ').filter((word) => word !== '');
    if (words.length === 0) return;
    this.maxLength = Math.max(this.maxLength, value.length);
    increment(this.wordCounts, words.length);
    if (words.length === 1) {
      increment(this.solo, words[0]!);
      return;
    }
    increment(this.first, words[0]!);
    increment(this.last, words[words.length - 1]!);
    for (let i = 1; i < words.length - 1; i++) increment(this.middle, words[i]!);
  }

  build(): NameSampler {
    return new NameSampler(
      new Weighted(this.wordCounts),
      new Weighted(this.solo),
      new Weighted(this.first),
      this.middle.size > 0 ? new Weighted(this.middle) : undefined,
      new Weighted(this.last),
      this.maxLength,
    );
  }
}

class NameSampler {
  private readonly wordCounts: Weighted<number>;
  private readonly solo: Weighted<string>;
  private readonly first: Weighted<string>;
  private readonly middle: Weighted<string> | undefined;
  private readonly last: Weighted<string>;
  private readonly maxLength: number;

  constructor(
    wordCounts: Weighted<number>,
    solo: Weighted<string>,
    first: Weighted<string>,
    middle: Weighted<string> | undefined,
    last: Weighted<string>,
    maxLength: number,
  ) {
    this.wordCounts = wordCounts;
    this.solo = solo;
    this.first = first;
    this.middle = middle;
    this.last = last;
    this.maxLength = maxLength;
  }

  /** A name of at most the longest real length (the IRS field is 70 characters). */
  sample(random: Random): string {
    const count = this.wordCounts.pick(random);
    if (count === 1) return this.solo.pick(random).slice(0, this.maxLength);
    const words = [this.first.pick(random)];
    for (let i = 1; i < count - 1; i++) words.push(this.middle === undefined ? this.first.pick(random) : this.middle.pick(random));
    words.push(this.last.pick(random));
    let length = words.reduce((sum, word) => sum + word.length, words.length - 1);
    while (length > this.maxLength && words.length > 2) {
      length -= words[words.length - 2]!.length + 1;
      words.splice(words.length - 2, 1);
    }
    const name = words.join(' ');
    return name.length > this.maxLength ? name.slice(0, this.maxLength).trimEnd() : name;
  }
}

interface Model {
  organizationsRead: number;
  /** Share of real organizations whose NAME is shared with another (chapters: AMERICAN LEGION, ...). */
  repeatedNameShare: number;
  repeatedNames: Weighted<string>;
  names: NameSampler;
  sortNameShare: number;
  sortNames: NameSampler;
  /** '' = no tax status (SUBSECTION without an "IRC ..." meaning). */
  taxStatuses: Weighted<string>;
  /** '' = none (ORGANIZATION 0, 6 or missing). */
  legalStatuses: Weighted<string>;
  /** '' = no year (RULING missing, or outside 1900-2025). */
  years: Weighted<string>;
  /** '' = no NTEE tag (NTEE_CD empty or not in ntee_codes.csv). */
  nteeCodes: Weighted<string>;
  /** Definition sentences by NTEE code, and the codes that have any. */
  sentencesByCode: Map<string, string[]>;
  codesWithSentences: string[];
  /** Open Eligibility terms whose id is not duplicated. */
  oeTerms: { taxonomy: string; code: string }[];
}

async function* csvRecords(file: string): AsyncGenerator<string[]> {
  let input: Readable = createReadStream(file);
  if (file.endsWith('.gz')) input = input.pipe(createGunzip());
  yield* input.pipe(parse({ bom: true, skip_empty_lines: true, relax_column_count: false })) as AsyncIterable<string[]>;
}

/** The records of a CSV file as objects keyed by the named columns (which must exist). */
async function* csvRows<C extends string>(file: string, columns: readonly C[]): AsyncGenerator<Record<C, string>> {
  let indexes: number[] | undefined;
  for await (const record of csvRecords(file)) {
    if (indexes === undefined) {
      indexes = columns.map((column) => record.indexOf(column));
      const missing = columns.filter((_, i) => indexes![i] === -1);
      if (missing.length > 0) throw new Error(`${file}: missing column(s) ${missing.join(', ')}`);
      continue;
    }
    const row = {} as Record<C, string>;
    columns.forEach((column, i) => (row[column] = (record[indexes![i]!] ?? '').trim()));
    yield row;
  }
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z"(])/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
}

async function buildModel(dataDir: string): Promise<Model> {
  // NTEE codes and their definitions.
  const nteeCodes = new Set<string>();
  const sentencesByCode = new Map<string, string[]>();
  for await (const row of csvRows(join(dataDir, 'ntee', 'ntee_codes.csv'), ['code', 'definition'])) {
    nteeCodes.add(row.code);
    const sentences = splitSentences(row.definition);
    if (sentences.length > 0) sentencesByCode.set(row.code, sentences);
  }
  const codesWithSentences = [...sentencesByCode.keys()].sort(compare);

  // SUBSECTION code -> tax status ("03" -> "501(c)(3)").
  const taxStatusBySubsection = new Map<string, string>();
  for await (const row of csvRows(join(dataDir, 'irs-eo-bmf', 'bmf_code_values.csv'), ['field', 'code', 'description'])) {
    if (row.field === 'SUBSECTION' && row.description.startsWith('IRC ')) taxStatusBySubsection.set(row.code, row.description.slice(4));
  }

  // Open Eligibility terms (only ids that are not duplicated), in source order.
  const oeTerms: { taxonomy: string; code: string }[] = [];
  const oeFile = join(dataDir, 'open-eligibility', 'open_eligibility_v2_terms.csv');
  for await (const row of csvRows(oeFile, ['id', 'facet', 'id_is_duplicated'])) {
    const taxonomy = OE_TAXONOMY_BY_FACET[row.facet];
    if (taxonomy === undefined) throw new Error(`${oeFile}: unknown facet ${row.facet}`);
    if (row.id_is_duplicated === 'false') oeTerms.push({ taxonomy, code: row.id });
  }

  // The IRS BMF extracts.
  const bmfDir = join(dataDir, 'irs-eo-bmf');
  const bmfFiles = readdirSync(bmfDir)
    .filter((file) => /^eo.*\.csv\.gz$/.test(file))
    .sort()
    .map((file) => join(bmfDir, file));
  if (bmfFiles.length === 0) throw new Error(`no eo*.csv.gz files in ${bmfDir}`);
  const nameCounts = new Map<string, number>();
  const sortNameModel = new NameModel();
  const taxStatuses = new Map<string, number>();
  const legalStatuses = new Map<string, number>();
  const years = new Map<string, number>();
  const ntee = new Map<string, number>();
  let organizationsRead = 0;
  let withSortName = 0;
  const columns = ['NAME', 'SORT_NAME', 'SUBSECTION', 'ORGANIZATION', 'RULING', 'NTEE_CD'] as const;
  for (const file of bmfFiles) {
    for await (const row of csvRows(file, columns)) {
      organizationsRead++;
      increment(nameCounts, row.NAME);
      if (row.SORT_NAME !== '') {
        withSortName++;
        sortNameModel.add(row.SORT_NAME);
      }
      increment(taxStatuses, taxStatusBySubsection.get(row.SUBSECTION) ?? '');
      increment(legalStatuses, LEGAL_STATUS[row.ORGANIZATION] ?? '');
      const year = Number(row.RULING.slice(0, 4));
      increment(years, /^\d{4}/.test(row.RULING) && year >= 1900 && year <= 2025 ? String(year) : '');
      const raw = row.NTEE_CD.toUpperCase();
      const code = raw.length >= 3 && nteeCodes.has(raw.slice(0, 3)) ? raw.slice(0, 3) : nteeCodes.has(raw) ? raw : '';
      increment(ntee, code);
    }
  }

  // Names: repeated real names (chapters of national organizations) are kept whole, with their real
  // share; the other names feed the word model.
  const nameModel = new NameModel();
  const repeated = new Map<string, number>();
  let repeatedRows = 0;
  for (const [name, count] of nameCounts) {
    if (count > 1) {
      repeated.set(name, count);
      repeatedRows += count;
    } else {
      nameModel.add(name);
    }
  }

  return {
    organizationsRead,
    repeatedNameShare: repeatedRows / organizationsRead,
    repeatedNames: new Weighted(repeated),
    names: nameModel.build(),
    sortNameShare: withSortName / organizationsRead,
    sortNames: sortNameModel.build(),
    taxStatuses: new Weighted(taxStatuses),
    legalStatuses: new Weighted(legalStatuses),
    years: new Weighted(years),
    nteeCodes: new Weighted(ntee),
    sentencesByCode,
    codesWithSentences,
    oeTerms,
  };
}

// ---------------------------------------------------------------------------------------------------
// Generation

function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function organizationId(index: number): string {
  return `SYN${String(index).padStart(10, '0')}`;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * Parents without cycles: each organization i (0-based) has a rank (a*i + b) mod n, a permutation of
 * [0, n); a parent is drawn from the organizations of lower rank, so it can come before or after its
 * child in the file, and following parents always ends.
 */
class ParentPicker {
  private readonly n: bigint;
  private readonly a: bigint;
  private readonly aInverse: bigint;
  private readonly b: bigint;

  constructor(n: number, seed: number) {
    let a = Math.max(1, Math.floor(n * 0.6180339887));
    while (gcd(a, n) !== 1) a++;
    this.n = BigInt(n);
    this.a = BigInt(a);
    this.b = BigInt(seed % n);
    this.aInverse = modularInverse(this.a, this.n);
  }

  rank(index: number): number {
    return Number((this.a * BigInt(index) + this.b) % this.n);
  }

  indexOfRank(rank: number): number {
    return Number((((this.aInverse * (BigInt(rank) - this.b)) % this.n) + this.n) % this.n);
  }
}

function modularInverse(a: bigint, n: bigint): bigint {
  if (n === 1n) return 0n;
  let [oldR, r] = [a % n, n];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % n) + n) % n;
}

function slugWords(name: string): string[] {
  return name
    .toLowerCase()
    .split(/\s+/)
    .map((word) => word.replace(/[^a-z0-9]/g, ''))
    .filter((word) => word !== '');
}

function domainLabel(words: string[], index: number): string {
  const label = words.slice(0, 3).join('-').slice(0, 40).replace(/-+$/, '');
  return label === '' ? `org${index}` : label;
}

const EMAIL_LOCAL_PARTS = ['info', 'contact', 'office', 'admin', 'hello'] as const;
const WEBSITE_DOMAINS = ['example.org', 'example.com', 'example.net'] as const;

interface Counts {
  organizations: number;
  tags: number;
}

/** Buffers lines and writes them in chunks, waiting for 'drain' when the stream asks to. */
class ChunkWriter {
  private readonly stream: Writable;
  private buffer = '';

  constructor(stream: Writable) {
    this.stream = stream;
  }

  add(text: string): Promise<void> | undefined {
    this.buffer += text;
    if (this.buffer.length < 1 << 17) return undefined;
    return this.flush();
  }

  async flush(): Promise<void> {
    if (this.buffer === '') return;
    const chunk = this.buffer;
    this.buffer = '';
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    await this.flush();
    this.stream.end();
    await finished(this.stream);
  }
}

async function generate(model: Model, n: number, seed: number, nameSuffix: string, outDir: string, onProgress: (counts: Counts) => void): Promise<Counts> {
  const random = new Random(seed);
  const parents = new ParentPicker(n, seed);
  const organizations = new ChunkWriter(createWriteStream(join(outDir, 'organizations.csv'), { highWaterMark: 1 << 20 }));
  const tags = new ChunkWriter(createWriteStream(join(outDir, 'organization_tags.csv'), { highWaterMark: 1 << 20 }));
  const counts: Counts = { organizations: 0, tags: 0 };
  await organizations.add(ORGANIZATION_HEADER);
  await tags.add(TAG_HEADER);
  const seenOe = new Set<number>();

  for (let index = 0; index < n; index++) {
    const id = organizationId(index + 1);
    const status = random.chance(UNPUBLISHED_SHARE) ? 'unpublished' : 'published';
    const name = random.chance(model.repeatedNameShare) ? model.repeatedNames.pick(random) : model.names.sample(random);
    const alternateName = random.chance(model.sortNameShare) ? model.sortNames.sample(random) : '';
    const ntee = model.nteeCodes.pick(random);

    let description = '';
    if (random.chance(DESCRIPTION_SHARE)) {
      const sentences =
        model.sentencesByCode.get(ntee) ?? model.sentencesByCode.get(model.codesWithSentences[random.below(model.codesWithSentences.length)]!)!;
      const start = random.below(sentences.length);
      description = sentences[start]!;
      if (sentences.length > 1 && random.chance(TWO_SENTENCE_SHARE)) {
        description += (random.chance(MULTILINE_SHARE) ? '\n' : ' ') + sentences[(start + 1) % sentences.length]!;
      }
    }

    let email = '';
    let website = '';
    const wantsEmail = random.chance(EMAIL_SHARE);
    const wantsWebsite = random.chance(WEBSITE_SHARE);
    if (wantsEmail || wantsWebsite) {
      const words = slugWords(name);
      const label = domainLabel(words, index + 1);
      if (wantsEmail) {
        const local = random.below(4) === 0 && words[0] !== undefined ? words[0].slice(0, 20) : EMAIL_LOCAL_PARTS[random.below(EMAIL_LOCAL_PARTS.length)]!;
        email = `${local}@${label}.example.org`;
      }
      if (wantsWebsite) website = `https://www.${label}.${WEBSITE_DOMAINS[random.below(WEBSITE_DOMAINS.length)]!}/`;
    }

    const taxStatus = model.taxStatuses.pick(random);
    // Unique 9-digit tax ids: an affine permutation of [0, 10^9) (999983 is prime, so coprime to 10).
    const taxId = String((index * 999_983 + seed * 7 + 100_000_000) % 1_000_000_000).padStart(9, '0');
    const year = model.years.pick(random);
    const legalStatus = model.legalStatuses.pick(random);

    let parentId = '';
    if (random.chance(PARENT_SHARE)) {
      const rank = parents.rank(index);
      if (rank > 0) parentId = organizationId(parents.indexOfRank(random.below(rank)) + 1);
    }

    const line =
      `${id},${csvField(name + nameSuffix)},${status},${csvField(alternateName)},${csvField(description)},${email},${website},` +
      `${csvField(taxStatus)},${taxId},${year},${legalStatus},,${parentId}\n`;
    counts.organizations++;
    const wait = organizations.add(line);
    if (wait !== undefined) await wait;

    let tagLines = '';
    if (ntee !== '') {
      tagLines += `${id},ntee,${ntee}\n`;
      counts.tags++;
    }
    if (random.chance(OE_SHARE)) {
      const roll = random.float();
      const wanted = roll < OE_TAG_COUNT_WEIGHTS[0] ? 1 : roll < OE_TAG_COUNT_WEIGHTS[0] + OE_TAG_COUNT_WEIGHTS[1] ? 2 : 3;
      seenOe.clear();
      for (let attempt = 0; seenOe.size < wanted && attempt < wanted * 4; attempt++) {
        const termIndex = random.below(model.oeTerms.length);
        if (seenOe.has(termIndex)) continue;
        seenOe.add(termIndex);
        const term = model.oeTerms[termIndex]!;
        tagLines += `${id},${term.taxonomy},${term.code}\n`;
        counts.tags++;
      }
    }
    if (tagLines !== '') {
      const tagWait = tags.add(tagLines);
      if (tagWait !== undefined) await tagWait;
    }

    if ((index & 0x3fff) === 0) onProgress(counts);
  }
  await Promise.all([organizations.close(), tags.close()]);
  return counts;
}

// ---------------------------------------------------------------------------------------------------
// Command line

function formatBytes(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

async function main(): Promise<number> {
  let options;
  try {
    options = parseArgs({
      options: {
        organizations: { type: 'string', default: '2000000' },
        seed: { type: 'string', default: '1' },
        'name-suffix': { type: 'string', default: '' },
        out: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let n: number;
  let seed: number;
  try {
    if (options.out === undefined || options.out === '') throw new Error('--out DIR is required');
    n = parseInteger('organizations', options.organizations, 1, 999_999_999);
    seed = parseInteger('seed', options.seed, 0, 0xffffffff);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const outDir = resolve(options.out);
  mkdirSync(outDir, { recursive: true });

  const started = performance.now();
  const model = await buildModel(DATA_DIR);
  const modelSeconds = (performance.now() - started) / 1000;
  process.stderr.write(
    `Read ${model.organizationsRead.toLocaleString('en-US')} real organizations in ${modelSeconds.toFixed(1)} s ` +
      `(repeated names ${(model.repeatedNameShare * 100).toFixed(1)} %, sort names ${(model.sortNameShare * 100).toFixed(1)} %, ` +
      `${model.nteeCodes.values.length - 1} NTEE codes, ${model.oeTerms.length} Open Eligibility terms).\n`,
  );

  const tty = process.stderr.isTTY === true;
  const interval = tty ? 250 : 2000;
  let lastReport = performance.now();
  const onProgress = (counts: Counts): void => {
    const now = performance.now();
    if (now - lastReport < interval) return;
    lastReport = now;
    const percent = ((counts.organizations / n) * 100).toFixed(1);
    const line = `generating: ${counts.organizations.toLocaleString('en-US')} / ${n.toLocaleString('en-US')} organizations (${percent} %), ${((now - started) / 1000).toFixed(1)} s`;
    process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
  };
  const counts = await generate(model, n, seed, options['name-suffix'], outDir, onProgress);
  if (tty) process.stderr.write('\r\x1b[K');
  const seconds = (performance.now() - started) / 1000;

  const files = [
    { file: join(outDir, 'organizations.csv'), rows: counts.organizations },
    { file: join(outDir, 'organization_tags.csv'), rows: counts.tags },
  ];
  for (const { file, rows } of files) {
    const bytes = statSync(file).size;
    process.stdout.write(`${file}: ${rows.toLocaleString('en-US')} rows, ${bytes.toLocaleString('en-US')} bytes (${formatBytes(bytes)})\n`);
  }
  process.stdout.write(`Generated ${n.toLocaleString('en-US')} organizations (seed ${seed}) in ${seconds.toFixed(1)} s.\n`);
  return 0;
}

runMain(main);
