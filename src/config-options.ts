import { DEFAULT_MAX_EVENT_LOOP_DELAY_MS, DEFAULT_MAX_EXPORTS } from './http/limits.ts';

/**
 * Every setting, as a flag or an environment variable (flags win), per command. Documented in the
 * README and in each command's --help.
 */
export type Command = 'serve' | 'import' | 'validate' | 'migrate' | 'use' | 'export' | 'sync';

export interface OptionSpec {
  env: string;
  default: string;
  help: string;
  commands: readonly Command[];
  /** A flag without a value (`--strict`); its variable takes true/false. */
  flag?: boolean;
  /** A whole number from `min` to `max`, counted in `unit` if it has one: checked, and said in --help. */
  integer?: { min: number; max: number; unit?: string };
  /** The values it may take: checked, and listed in --help. */
  choices?: readonly string[];
  /** Text of this form (see FORMS in config.ts): checked, and said in --help. Unset is always allowed. */
  form?: ValueForm;
  /** Several values of `form`, comma-separated. */
  list?: boolean;
}

export type ValueForm = 'http url' | 'base url' | 'postgres url' | 'email' | 'org-id' | 'one line' | 'proxies';

export const CONFIG_OPTIONS = {
  'data-dir': {
    env: 'DATA_DIR',
    default: 'var/hsds',
    help: 'directory of published snapshots (serve and export read it; import, use and sync write it)',
    commands: ['serve', 'import', 'use', 'export', 'sync'],
  },
  'database-url': {
    env: 'DATABASE_URL',
    default: '',
    help: 'PostgreSQL to serve from and publish to, e.g. postgres://user:password@host:port/database; unset: the embedded SQLite store in --data-dir',
    commands: ['serve', 'import', 'migrate', 'export', 'sync'],
    form: 'postgres url',
  },
  'database-replica-urls': {
    env: 'DATABASE_REPLICA_URLS',
    default: '',
    help: 'read replicas of that PostgreSQL: reads go to them in turn (publishing stays on the primary)',
    commands: ['serve'],
    form: 'postgres url',
    list: true,
  },
  'database-pool-size': {
    env: 'DATABASE_POOL_SIZE',
    default: '10',
    help: 'connections per PostgreSQL database, at most',
    commands: ['serve'],
    integer: { min: 1, max: 1000 },
  },
  'database-statement-timeout': {
    env: 'DATABASE_STATEMENT_TIMEOUT',
    default: '5000',
    help: 'milliseconds a PostgreSQL query may take before the request gets a 503',
    commands: ['serve'],
    integer: { min: 100, max: 600_000, unit: 'milliseconds' },
  },
  migrate: {
    env: 'DATABASE_MIGRATE',
    default: 'false',
    help: 'apply pending PostgreSQL migrations first (else run the migrate command)',
    commands: ['serve', 'import'],
    flag: true,
  },
  port: { env: 'PORT', default: '8080', help: 'TCP port to listen on', commands: ['serve'], integer: { min: 0, max: 65_535 } },
  host: { env: 'HOST', default: '0.0.0.0', help: 'interface to listen on', commands: ['serve'] },
  'public-base-url': {
    env: 'PUBLIC_BASE_URL',
    default: '',
    help: 'absolute base URL used in links, e.g. https://api.example.org; set it behind a proxy',
    commands: ['serve'],
    form: 'base url',
  },
  'trust-proxy': {
    env: 'TRUST_PROXY',
    default: 'false',
    help: 'proxies whose X-Forwarded-* headers are believed: how many are in front (e.g. 1; the nearest on a private network), or their addresses',
    commands: ['serve'],
    form: 'proxies',
  },
  'metrics-port': {
    env: 'METRICS_PORT',
    default: '',
    help: 'serve /metrics on this port (on --metrics-host) instead of the main one; set it in production',
    commands: ['serve'],
    integer: { min: 0, max: 65_535 },
  },
  'metrics-host': { env: 'METRICS_HOST', default: '127.0.0.1', help: 'interface of the metrics port: loopback or a private one', commands: ['serve'] },
  description: {
    env: 'API_DESCRIPTION',
    default: '',
    help: 'the root object\'s description: what this feed is, in a sentence or two',
    commands: ['serve'],
    form: 'one line',
  },
  'data-guide': { env: 'DATA_GUIDE', default: '', help: 'URL of a page explaining this dataset to people (the root\'s data_guide)', commands: ['serve'], form: 'http url' },
  'publisher-name': { env: 'PUBLISHER_NAME', default: '', help: 'who publishes this feed (the root\'s publisher.name)', commands: ['serve'] },
  'publisher-identifier': {
    env: 'PUBLISHER_IDENTIFIER',
    default: '',
    help: 'the publisher\'s org-id.guide identifier, e.g. US-EIN-530196605',
    commands: ['serve'],
    form: 'org-id',
  },
  'publisher-email': { env: 'PUBLISHER_EMAIL', default: '', help: 'where to send feedback about the data', commands: ['serve'], form: 'email' },
  'publisher-website': { env: 'PUBLISHER_WEBSITE', default: '', help: 'URL where feedback about the data can be given', commands: ['serve'], form: 'http url' },
  'publisher-additional-websites': {
    env: 'PUBLISHER_ADDITIONAL_WEBSITES',
    default: '',
    help: 'more URLs to reach the publisher',
    commands: ['serve'],
    form: 'http url',
    list: true,
  },
  'log-level': {
    env: 'LOG_LEVEL',
    default: 'info',
    help: 'the least severe kind of log line written, from fatal (the fewest) to trace (all), or silent',
    commands: ['serve'],
    choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
  },
  'cache-max-age': {
    env: 'CACHE_MAX_AGE',
    default: '300',
    help: 'seconds clients and edge caches may keep a response (Cache-Control max-age)',
    commands: ['serve'],
    integer: { min: 0, max: 31_536_000, unit: 'seconds' },
  },
  'response-cache-size': {
    env: 'RESPONSE_CACHE_SIZE',
    default: '64',
    help: 'MiB of finished responses kept in memory and sent again until the next publish (0 turns it off)',
    commands: ['serve'],
    integer: { min: 0, max: 65_536, unit: 'MiB' },
  },
  'rate-limit': {
    env: 'RATE_LIMIT',
    default: '0',
    help: 'requests per minute one client may send before getting 429s (0: no limit, as behind an edge cache)',
    commands: ['serve'],
    integer: { min: 0, max: 1_000_000 },
  },
  'max-exports': {
    env: 'MAX_EXPORTS',
    default: String(DEFAULT_MAX_EXPORTS),
    help: 'exports (format=ndjson) streamed at once; more get a 503 with Retry-After',
    commands: ['serve'],
    integer: { min: 1, max: 10_000 },
  },
  'max-event-loop-delay': {
    env: 'MAX_EVENT_LOOP_DELAY',
    default: String(DEFAULT_MAX_EVENT_LOOP_DELAY_MS),
    help: 'milliseconds of event-loop delay (mean over a second) past which requests other than health probes get a 503 (0: never shed)',
    commands: ['serve'],
    integer: { min: 0, max: 60_000, unit: 'milliseconds' },
  },
  workers: {
    env: 'WORKERS',
    default: '1',
    help: 'processes serving the port together, each following publishes on its own (one per core at most; with PostgreSQL each has its own pool)',
    commands: ['serve'],
    integer: { min: 1, max: 256 },
  },
  'shutdown-timeout': {
    env: 'SHUTDOWN_TIMEOUT',
    default: '10',
    help: 'seconds responses under way may take to finish after SIGTERM/SIGINT before the process exits anyway (with code 1)',
    commands: ['serve'],
    integer: { min: 1, max: 3600, unit: 'seconds' },
  },
  'max-errors': {
    env: 'MAX_ERRORS',
    default: '50',
    help: 'stop after this many errors',
    commands: ['import', 'validate', 'sync'],
    integer: { min: 1, max: 100_000 },
  },
  strict: { env: 'STRICT', default: 'false', help: 'treat warnings as errors', commands: ['import', 'validate', 'sync'], flag: true },
  'harvest-rate': {
    env: 'HARVEST_RATE',
    default: '10',
    help: 'requests per second at most to an HSDS API given as a source, 4 at once (0: no limit, for an API of your own); a key it needs goes in HSDS_SOURCE_HEADER, never on the command line',
    commands: ['import', 'validate', 'sync'],
    integer: { min: 0, max: 10_000 },
  },
  progress: {
    env: 'PROGRESS',
    default: 'auto',
    help: 'how an import shows its progress: auto is a bar on a terminal, else lines',
    commands: ['serve', 'import', 'validate', 'sync'],
    choices: ['bar', 'lines', 'none', 'auto'],
  },
} as const satisfies Record<string, OptionSpec>;

export type OptionName = keyof typeof CONFIG_OPTIONS;
