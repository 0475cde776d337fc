/**
 * The search bench: the judged queries of bench/search/queries.json and the need-phrased queries of
 * bench/search/needs.json, asked of this API over HTTP and of MiniSearch (in this process) over the
 * same organizations' names and alternate names, read from data/. Prints success@1, success@5 and MRR
 * (known items), nDCG@10 (topics), the zero-result rate and latency percentiles (one query at a time)
 * for each, with the commit; then nDCG@10, success@5 and the zero-result rate of the needs, in all and
 * per language. See bench/search/README.md.
 *
 *   node bench/search/run.ts [--data-dir DIR | --database-url URL | --url URL] [--rounds N] [--json]
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import MiniSearch from 'minisearch';
import { describeMachine, formatTable, gitRevision, log, machine, parseInteger, REPO, runMain, writeResults } from '../lib/run.ts';
import { API, servedBundled, startServer } from '../lib/served.ts';
import type { Server } from '../lib/served.ts';
import { grade, needGrade, readOrganizations } from './data.ts';
import type { Need, NeedSet, Organization, TopicRule } from './data.ts';

const USAGE = `Usage: node bench/search/run.ts [--data-dir DIR | --database-url URL | --url URL] [--rounds N] [--json]

Options:
  --data-dir DIR       serve this published data directory (default: the bundled dataset, published
                       once into bench/.cache/)
  --database-url URL   serve this PostgreSQL database instead
  --url URL            ask a server already running (e.g. http://127.0.0.1:8080); start it with
                       --response-cache-size 0, or repeated queries are answered from its cache
  --rounds N           timed passes over the queries after one untimed warm-up pass (default 3)
  --queries FILE       the judged query set (default bench/search/queries.json)
  --needs FILE         the need-phrased query set (default bench/search/needs.json)
  --port P             port of the server started here (default 18790)
  --json               also write bench/results/search-<time>.json, with every query's outcome
  --api-only           leave MiniSearch out (quicker, for trying a change)
  --help               print this help`;

const PER_PAGE = 10;
/** Asked with every query again, to time the facets of a searched list (issue 18: p95 <= 25 ms). */
const FACETS = 'facets=ntee:1,tax_status';
const MINISEARCH_OPTIONS = { fuzzy: 0.2, prefix: true, boost: { name: 2 } };

interface QuerySet {
  seed: number;
  known: { variant: string; query: string; ein: string; name: string }[];
  topics: { query: string; rule: TopicRule; grade_2: number; grade_1: number }[];
}

interface Answer {
  ids: string[];
  zero: boolean;
  ms: number;
}

type Engine = (query: string) => Promise<Answer>;

/** One keep-alive connection, one request at a time: a request's latency is its own, not a queue's. */
function httpEngine(base: string, extra = ''): Engine {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return (query) =>
    new Promise((resolvePromise, reject) => {
      const started = performance.now();
      const url = `${base}${API}/organizations?search=${encodeURIComponent(query)}&per_page=${PER_PAGE}${extra}`;
      request(url, { agent, headers: { accept: 'application/json', 'accept-encoding': 'gzip' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const ms = performance.now() - started;
          const raw = Buffer.concat(chunks);
          const encoding = response.headers['content-encoding'];
          const body = encoding === 'gzip' ? gunzipSync(raw) : encoding === 'br' ? brotliDecompressSync(raw) : raw;
          if (response.statusCode !== 200) return reject(new Error(`${url} answered ${response.statusCode}: ${body.toString().slice(0, 300)}`));
          const page = JSON.parse(body.toString()) as { total_items: number; contents: { external_identifier?: string }[] };
          resolvePromise({ ids: page.contents.map((organization) => organization.external_identifier ?? ''), zero: page.total_items === 0, ms });
        });
      })
        .on('error', reject)
        .end();
    });
}

function miniSearchEngine(organizations: Organization[]): { engine: Engine; indexSeconds: number } {
  const started = performance.now();
  const index = new MiniSearch<Organization>({ idField: 'ein', fields: ['name', 'alternateName'], searchOptions: MINISEARCH_OPTIONS });
  index.addAll(organizations);
  const indexSeconds = (performance.now() - started) / 1000;
  const engine: Engine = async (query) => {
    const started = performance.now();
    const results = index.search(query);
    const ms = performance.now() - started;
    return { ids: results.slice(0, PER_PAGE).map((result) => String(result.id)), zero: results.length === 0, ms };
  };
  return { engine, indexSeconds };
}

/** Discounted cumulative gain of the first 10 grades, with gain 2^grade - 1. */
const dcg = (grades: number[]): number => grades.slice(0, PER_PAGE).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);

/** nDCG@10 of the grades of an answer, against the best 10 of the judged organizations (2 before 1). */
function ndcg(grades: number[], twosJudged: number, onesJudged: number): number {
  const twos = Math.min(PER_PAGE, twosJudged);
  const ideal = dcg([...Array<number>(twos).fill(2), ...Array<number>(Math.min(PER_PAGE - twos, onesJudged)).fill(1)]);
  return ideal === 0 ? 0 : dcg(grades) / ideal;
}

/** Nearest-rank percentile. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface Outcome {
  query: string;
  kind: 'known' | 'topic' | 'need';
  variant?: string;
  /** Needs: the language of the query and the need it is phrased for. */
  language?: Need['language'];
  need?: string;
  /** Known items: the target's position in the first 10 (1-based), or null. */
  rank?: number | null;
  ndcg?: number;
  /** A result of grade 1 or 2 among the first 5 (topics, needs), or the target among them (known items). */
  success5: boolean;
  zero: boolean;
  ids: string[];
  /** Its slowest time of the timed passes, to find what makes the upper percentiles. */
  slowestMs: number;
}

/** The needs' figures of a group of their outcomes (all, or one language). */
interface NeedFigures {
  queries: number;
  ndcgAt10: number;
  successAt5: number;
  zeroRate: number;
  latencyMs: { p50: number; p95: number };
}

async function measure(name: string, engine: Engine, set: QuerySet, judgments: Map<string, number>[], needs: NeedSet, needJudgments: Map<string, number>[], rounds: number) {
  // The needs are asked in the same passes, after the known items and topics; their times are kept
  // apart, so the table's percentiles stay those of the same queries as before the needs came.
  const judged = set.known.length + set.topics.length;
  const queries = [...set.known.map((k) => k.query), ...set.topics.map((t) => t.query), ...needs.needs.map((n) => n.query)];
  log(`${name}: a warm-up pass, then ${rounds} timed over ${queries.length} queries ...`);
  for (const query of queries) await engine(query);
  const latencies: number[] = [];
  const needLatencies = needs.needs.map((): number[] => []);
  const first: Answer[] = [];
  const slowest = queries.map(() => 0);
  for (let round = 0; round < rounds; round++) {
    for (const [index, query] of queries.entries()) {
      const answer = await engine(query);
      if (index < judged) latencies.push(answer.ms);
      else needLatencies[index - judged]!.push(answer.ms);
      slowest[index] = Math.max(slowest[index]!, answer.ms);
      if (round === 0) first.push(answer);
    }
  }
  const outcomes: Outcome[] = [
    ...set.known.map((k, i): Outcome => {
      const { ids, zero } = first[i]!;
      const at = ids.indexOf(k.ein);
      return { query: k.query, kind: 'known', variant: k.variant, rank: at === -1 ? null : at + 1, success5: at !== -1 && at < 5, zero, ids, slowestMs: slowest[i]! };
    }),
    ...set.topics.map((t, i): Outcome => {
      const { ids, zero } = first[set.known.length + i]!;
      const relevant = judgments[i]!;
      const grades = ids.map((id) => relevant.get(id) ?? 0);
      const slowestMs = slowest[set.known.length + i]!;
      return { query: t.query, kind: 'topic', ndcg: ndcg(grades, t.grade_2, t.grade_1), success5: grades.slice(0, 5).some((g) => g > 0), zero, ids, slowestMs };
    }),
  ];
  const needOutcomes = needs.needs.map((n, i): Outcome => {
    const { ids, zero } = first[judged + i]!;
    const relevant = needJudgments[i]!;
    const grades = ids.map((id) => relevant.get(id) ?? 0);
    const { grade2, grade1 } = n.organizations!;
    return { query: n.query, kind: 'need', language: n.language, need: n.need, ndcg: ndcg(grades, grade2, grade1), success5: grades.slice(0, 5).some((g) => g > 0), zero, ids, slowestMs: slowest[judged + i]! };
  });
  const known = outcomes.filter((o) => o.kind === 'known');
  const topics = outcomes.filter((o) => o.kind === 'topic');
  const mean = (numbers: number[]) => numbers.reduce((sum, n) => sum + n, 0) / numbers.length;
  latencies.sort((a, b) => a - b);
  const needFigures = (language?: Need['language']): NeedFigures => {
    const picked = needOutcomes.flatMap((o, i) => (language === undefined || o.language === language ? [i] : []));
    const times = picked.flatMap((i) => needLatencies[i]!).sort((a, b) => a - b);
    return {
      queries: picked.length,
      ndcgAt10: mean(picked.map((i) => needOutcomes[i]!.ndcg!)),
      successAt5: mean(picked.map((i) => (needOutcomes[i]!.success5 ? 1 : 0))),
      zeroRate: mean(picked.map((i) => (needOutcomes[i]!.zero ? 1 : 0))),
      latencyMs: { p50: percentile(times, 50), p95: percentile(times, 95) },
    };
  };
  return {
    name,
    successAt1: mean(known.map((o) => (o.rank === 1 ? 1 : 0))),
    successAt5: mean(known.map((o) => (o.success5 ? 1 : 0))),
    mrr: mean(known.map((o) => (o.rank == null ? 0 : 1 / o.rank))),
    ndcgAt10: mean(topics.map((o) => o.ndcg!)),
    successAt5All: mean(outcomes.map((o) => (o.success5 ? 1 : 0))),
    zeroRate: mean(outcomes.map((o) => (o.zero ? 1 : 0))),
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), samples: latencies.length },
    outcomes: [...outcomes, ...needOutcomes],
    needs: { all: needFigures(), en: needFigures('en'), es: needFigures('es') },
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      url: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      queries: { type: 'string', default: join(import.meta.dirname, 'queries.json') },
      needs: { type: 'string', default: join(import.meta.dirname, 'needs.json') },
      port: { type: 'string', default: '18790' },
      json: { type: 'boolean', default: false },
      'api-only': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const startedAt = new Date();
  const rounds = parseInteger('rounds', values.rounds!, 1, 100);
  const port = parseInteger('port', values.port!, 1, 65535);
  const set = JSON.parse(readFileSync(values.queries!, 'utf8')) as QuerySet;
  const needs = JSON.parse(readFileSync(values.needs!, 'utf8')) as NeedSet;

  log('Reading the organizations of data/irs-eo-bmf ...');
  const organizations = await readOrganizations();
  const byEin = new Map(organizations.map((organization) => [organization.ein, organization]));
  for (const k of set.known) {
    if (byEin.get(k.ein)?.name !== k.name) throw new Error(`${k.ein} is not "${k.name}" in data/: make the queries again (node bench/search/make-queries.ts)`);
  }
  // The judgments follow from each topic's rule; the counts in the file catch data that changed since.
  const judgments = set.topics.map((topic) => {
    const relevant = new Map<string, number>();
    for (const organization of organizations) {
      const g = grade(topic.rule, organization);
      if (g > 0) relevant.set(organization.ein, g);
    }
    const twos = [...relevant.values()].filter((g) => g === 2).length;
    if (twos !== topic.grade_2 || relevant.size - twos !== topic.grade_1) {
      throw new Error(`topic "${topic.query}": data/ gives ${twos} + ${relevant.size - twos} relevant, the file ${topic.grade_2} + ${topic.grade_1}: make the queries again`);
    }
    return relevant;
  });
  // The same for the needs, whose counts count-needs.ts wrote.
  const needJudgments = needs.needs.map((need) => {
    const relevant = new Map<string, number>();
    for (const organization of organizations) {
      const g = needGrade(need, organization);
      if (g > 0) relevant.set(organization.ein, g);
    }
    const twos = [...relevant.values()].filter((g) => g === 2).length;
    if (need.organizations === undefined || twos !== need.organizations.grade2 || relevant.size - twos !== need.organizations.grade1) {
      throw new Error(`need "${need.query}": data/ gives ${twos} + ${relevant.size - twos} relevant, the file ${need.organizations?.grade2} + ${need.organizations?.grade1}: count again (npm run bench:search:needs)`);
    }
    return relevant;
  });

  let server: Server | undefined;
  let base = values.url?.replace(/\/+$/, '');
  let target: string;
  if (base !== undefined) {
    target = `${base} (running; its commit is its own)`;
  } else {
    const served = values['database-url'] !== undefined ? { databaseUrl: values['database-url'] } : { dataDir: resolve(values['data-dir'] ?? (await servedBundled())) };
    log(`Starting serve (${'dataDir' in served ? served.dataDir : 'PostgreSQL'}) on port ${port}, response cache off ...`);
    server = await startServer(served, port, ['--response-cache-size', '0']);
    base = `http://127.0.0.1:${port}`;
    target = `serve ${'dataDir' in served ? `--data-dir ${served.dataDir}` : '--database-url <given>'} --response-cache-size 0, this checkout`;
  }
  let api;
  let withFacets;
  try {
    const root = (await (await fetch(`${base}${API}`)).json()) as { dataset?: { organizations?: number } };
    const served = root.dataset?.organizations;
    if (served !== organizations.length) log(`Warning: the API serves ${served} organizations, data/ has ${organizations.length}: the engines do not search the same names.`);
    api = await measure('this API', httpEngine(base), set, judgments, needs, needJudgments, rounds);
    withFacets = await measure(`this API, ${FACETS}`, httpEngine(base, `&${FACETS}`), set, judgments, needs, needJudgments, rounds);
  } finally {
    await server?.stop();
  }

  let mini: ReturnType<typeof miniSearchEngine> | undefined;
  let miniResult: typeof api | undefined;
  const miniVersion = (JSON.parse(readFileSync(join(REPO, 'node_modules', 'minisearch', 'package.json'), 'utf8')) as { version: string }).version;
  if (!values['api-only']) {
    log(`MiniSearch: indexing ${organizations.length.toLocaleString('en-US')} names and alternate names ...`);
    mini = miniSearchEngine(organizations);
    miniResult = await measure(`MiniSearch ${miniVersion}`, mini.engine, set, judgments, needs, needJudgments, rounds);
  }

  const revision = gitRevision();
  const m = machine();
  const results = miniResult === undefined ? [api, withFacets!] : [api, withFacets!, miniResult];
  const fixed = (n: number) => n.toFixed(2);
  const ms = (n: number) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
  console.log(`Search bench: ${set.known.length} known items and ${set.topics.length} topics (${relative(REPO, resolve(values.queries!))}, seed ${set.seed}), ${organizations.length.toLocaleString('en-US')} organizations`);
  console.log(`commit ${revision.commit ?? 'unknown'}${revision.dirty ? ' (with uncommitted changes)' : ''}; ${describeMachine(m)}`);
  console.log(`this API: ${target}; HTTP/1.1 over loopback, one keep-alive connection, one query at a time, gzip, per_page=${PER_PAGE}`);
  if (mini !== undefined) {
    console.log(`MiniSearch ${miniVersion}: in this process (no HTTP, no JSON), fields name and alternate_name, ${JSON.stringify(MINISEARCH_OPTIONS)}, indexed in ${mini.indexSeconds.toFixed(1)} s`);
  }
  console.log(`this API, ${FACETS}: the same queries asked again with facets (counts of the whole list)`);
  console.log(`latency: ${rounds} timed pass${rounds === 1 ? '' : 'es'} after a warm-up pass; known items: success@k = the organization among the first k, MRR over the first 10; topics: nDCG@10, gain 2^grade - 1`);
  console.log('');
  console.log(
    formatTable(
      ['engine', 'success@1', 'success@5', 'MRR', 'nDCG@10', 'success@5 all', 'zero results', 'p50 ms', 'p95 ms', 'p99 ms'],
      results.map((r) => [r.name, fixed(r.successAt1), fixed(r.successAt5), fixed(r.mrr), fixed(r.ndcgAt10), fixed(r.successAt5All), `${(r.zeroRate * 100).toFixed(1)}%`, ms(r.latencyMs.p50), ms(r.latencyMs.p95), ms(r.latencyMs.p99)]),
      new Set([0]),
    ),
  );
  console.log('');
  const variants = [...new Set(set.known.map((k) => k.variant))];
  const byVariant = (r: typeof api, variant: string) => {
    const outcomes = r.outcomes.filter((o) => o.variant === variant);
    return `${outcomes.filter((o) => o.success5).length}/${outcomes.length}`;
  };
  console.log(formatTable(['known items, success@5', ...variants], results.map((r) => [r.name, ...variants.map((v) => byVariant(r, v))]), new Set([0])));
  console.log('');
  const languages = (['en', 'es'] as const).map((language) => `${needs.needs.filter((n) => n.language === language).length} ${language}`).join(', ');
  console.log(`needs: ${needs.needs.length} need-phrased queries (${languages}; ${relative(REPO, resolve(values.needs!))}), graded by NTEE code; nDCG@10 as the topics, success@5 = grade 1 or 2 among the first 5; times of the same passes, apart from the table above`);
  console.log(
    formatTable(
      ['needs', 'queries', 'nDCG@10', 'success@5', 'zero results', 'p50 ms', 'p95 ms'],
      results.flatMap((r) =>
        (['all', 'en', 'es'] as const).map((group) => {
          const f = r.needs[group];
          return [group === 'all' ? r.name : `${r.name}, ${group}`, String(f.queries), fixed(f.ndcgAt10), fixed(f.successAt5), `${(f.zeroRate * 100).toFixed(1)}%`, ms(f.latencyMs.p50), ms(f.latencyMs.p95)];
        }),
      ),
      new Set([0]),
    ),
  );

  if (values.json) {
    const file = writeResults('search', startedAt, { startedAt: startedAt.toISOString(), revision, machine: m, target, queries: values.queries, needs: values.needs, seed: set.seed, rounds, miniSearch: mini === undefined ? null : { version: miniVersion, options: MINISEARCH_OPTIONS, indexSeconds: mini.indexSeconds }, results });
    log(`Results: ${file}`);
  }
  return 0;
}

runMain(main);
