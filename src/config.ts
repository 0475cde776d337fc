import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_OPTIONS } from './config-options.ts';
import type { Command, OptionName, OptionSpec, ValueForm } from './config-options.ts';
import { DEFAULT_POSTGRES_SETTINGS } from './store/postgres/connection.ts';
import type { PostgresSettings } from './store/postgres/connection.ts';
import type { PostgresTarget } from './publish/publish-postgres.ts';
import { isProxyAddress, NAMED_RANGES } from './http/trust-proxy.ts';
import type { TrustProxy } from './http/trust-proxy.ts';
import type { RootDetails } from './http/schemas.ts';

export type { Command } from './config-options.ts';

/** Reads the settings of config-options.ts, from flags and the environment, into each command's config. */

export class ConfigError extends Error {}

export type ProgressMode = 'bar' | 'lines' | 'none';

export interface ServeConfig {
  port: number;
  host: string;
  /** Directory of published snapshots; the default dataset is published there first when it is empty. */
  dataDir: string;
  /** Absolute base for links, e.g. https://api.example.org; when unset, taken from each request. */
  publicBaseUrl: string | undefined;
  /** Proxies whose X-Forwarded-* headers are believed (see trust-proxy.ts). */
  trustProxy: TrustProxy;
  /** Where /metrics is served apart from the API; undefined: on the main port. */
  metrics: { port: number; host: string } | undefined;
  logLevel: string;
  progress: ProgressMode;
  /** Cache-Control max-age of successful responses, in seconds. */
  cacheMaxAge: number;
  /** Bytes the in-process response cache may hold; 0 turns it off. */
  responseCacheBytes: number;
  /** Serve from PostgreSQL instead of the data directory. */
  database: (PostgresSettings & { migrate: boolean }) | undefined;
  /** Requests per minute per client; 0: no limit. */
  rateLimitPerMinute: number;
  /** Exports streamed at once; more are answered 503. */
  maxExports: number;
  /** Event-loop delay (ms) past which requests are shed; 0: never. */
  maxEventLoopDelayMs: number;
  /** How long responses under way may take to finish once a shutdown begins. */
  shutdownTimeoutMs: number;
  /** Processes serving the port together (serve --workers). */
  workers: number;
  /** What the root object says about this feed beyond HSDS's required fields; only what the operator set. */
  rootDetails: RootDetails;
}

/** How an HSDS API given to `import` as a source is read (see sources/hsds-api.ts). */
export interface HarvestOptions {
  /** Requests a second at most; 0: no limit. */
  requestsPerSecond: number;
  /** Requests under way at once. */
  concurrency: number;
  timeoutMs: number;
  /** The first wait before a request is tried again (then doubled), when the server does not say. */
  retryDelayMs: number;
  /** A header every request carries (a key): never printed. */
  header?: { name: string; value: string };
}

export const DEFAULT_HARVEST: HarvestOptions = { requestsPerSecond: 10, concurrency: 4, timeoutMs: 30_000, retryDelayMs: 1000 };

export interface ImportConfig {
  dataDir: string;
  maxErrors: number;
  strict: boolean;
  progress: ProgressMode;
  /** Source arguments, `[kind:]path`. */
  sources: string[];
  /** Publish to PostgreSQL instead of the data directory. */
  database: PostgresTarget | undefined;
  /** How an HSDS API given as a source is read. */
  harvest: HarvestOptions;
}

export interface UseConfig {
  dataDir: string;
  /** A snapshot's file name in the data directory's snapshots/ (or its path there). */
  snapshot: string;
}

export interface ExportConfig {
  dataDir: string;
  /** Read the live dataset from PostgreSQL instead of the data directory. */
  databaseUrl: string | undefined;
  /** The folder to write the package into: new, or empty. */
  directory: string;
}

export interface MigrateConfig {
  databaseUrl: string;
}

function parseBoolean(name: string, value: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no|)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

/** An absolute http(s) URL, or undefined. */
function httpUrl(value: string): URL | undefined {
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') ? url : undefined;
}

/** The number of proxies in front, or their addresses; false for none; undefined if neither. */
function trustedProxies(value: string): TrustProxy | undefined {
  if (/^(false|no|0)$/i.test(value)) return false;
  if (/^(true|yes)$/i.test(value)) {
    throw new ConfigError(
      `trust proxy "${value}" would believe X-Forwarded-* from any client (its own address for the rate limit, any host in links): give the number of proxies in front (e.g. 1) or their addresses (e.g. 10.0.0.5,192.168.0.0/16)`,
    );
  }
  if (/^\d+$/.test(value)) return Number(value) <= 16 ? Number(value) : undefined;
  const entries = value.split(',').map((entry) => entry.trim());
  if (!entries.every(isProxyAddress)) return undefined;
  return entries;
}

// org-id.guide: a list code (a country or XI/XM, then the list's own code), then the identifier in that list.
const ORG_ID = /^[A-Z]{2}-[A-Z0-9]+-\S+$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const CONTROL = /[\p{Cc}]/u;

/**
 * Each form a setting's text may take (OptionSpec.form): what --help and messages call it, and its
 * reading (undefined: not of the form). `secret`: the value is never echoed (a URL may hold a password).
 */
const FORMS: Record<ValueForm, { says: string; read: (value: string) => unknown; secret?: boolean }> = {
  'http url': { says: 'an absolute http(s) URL', read: (value) => (httpUrl(value) === undefined ? undefined : value) },
  'base url': {
    says: 'an absolute http(s) URL without a query or fragment',
    read: (value) => {
      const url = httpUrl(value);
      return url === undefined || url.search !== '' || url.hash !== '' ? undefined : url.href.replace(/\/+$/, '');
    },
  },
  'postgres url': {
    says: 'a postgres:// or postgresql:// URL',
    read: (value) => (['postgres:', 'postgresql:'].includes(URL.parse(value)?.protocol ?? '') ? value : undefined),
    secret: true,
  },
  email: { says: 'an email address', read: (value) => (EMAIL.test(value) ? value : undefined) },
  'org-id': { says: 'an org-id.guide identifier: the list code, a dash, the identifier (e.g. US-EIN-530196605)', read: (value) => (ORG_ID.test(value) ? value : undefined) },
  'one line': { says: 'plain text on one line', read: (value) => (CONTROL.test(value) ? undefined : value) },
  proxies: { says: `0 to 16, or IP addresses, CIDR ranges or ${NAMED_RANGES.join(', ')}, comma-separated`, read: trustedProxies },
};

/** A setting of text, trimmed and read by its form if it has one, or undefined when unset; a list setting gives each value. */
function textSetting<T = string>(setting: (name: OptionName) => string, name: OptionName): T | undefined {
  const option: OptionSpec = CONFIG_OPTIONS[name];
  const form = option.form === undefined ? { says: '', read: (value: string) => value } : FORMS[option.form];
  const label = settingLabel(name);
  const read = (value: string, what: string) => {
    const result = form.read(value);
    if (result === undefined) throw new ConfigError(`${what} must be ${form.says}${'secret' in form && form.secret ? '' : `, got "${value}"`}`);
    return result;
  };
  const value = setting(name).trim();
  if (!option.list) return value === '' ? undefined : (read(value, label) as T);
  const values = value.split(',').map((each) => each.trim()).filter((each) => each !== '');
  return values.length === 0 ? undefined : (values.map((each) => read(each, `each of ${label}`)) as T);
}

function parseRootDetails(setting: (name: OptionName) => string): RootDetails {
  const publisher = withoutUnset({
    name: textSetting(setting, 'publisher-name'),
    identifier: textSetting(setting, 'publisher-identifier'),
    email: textSetting(setting, 'publisher-email'),
    website: textSetting(setting, 'publisher-website'),
    additional_websites: textSetting<string[]>(setting, 'publisher-additional-websites'),
  });
  return withoutUnset({
    description: textSetting(setting, 'description'),
    data_guide: textSetting(setting, 'data-guide'),
    publisher: Object.keys(publisher).length === 0 ? undefined : publisher,
  });
}

/** The object without its unset (undefined) members: what the root object shows is only what was set. */
const withoutUnset = <T extends object>(object: T): { [K in keyof T]?: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };

function parseMetrics(setting: (name: OptionName) => string): ServeConfig['metrics'] {
  if (setting('metrics-port') === '') return undefined;
  return { port: integerSetting(setting, 'metrics-port'), host: setting('metrics-host') };
}

/** How messages name a setting: its flag's words (`public base url`). */
const settingLabel = (name: OptionName): string => name.replaceAll('-', ' ');

/** A setting that is a whole number, checked against its range in config-options.ts; named in messages by its flag's words. */
function integerSetting(setting: (name: OptionName) => string, name: OptionName): number {
  const { min, max, unit } = (CONFIG_OPTIONS[name] as OptionSpec).integer!;
  return parseInteger(settingLabel(name), setting(name), min, max, unit === undefined ? '' : ` number of ${unit}`);
}

/** A setting that takes one of the values listed in config-options.ts. */
function choiceSetting(setting: (name: OptionName) => string, name: OptionName): string {
  const choices = (CONFIG_OPTIONS[name] as OptionSpec).choices!;
  const value = setting(name);
  if (!choices.includes(value)) throw new ConfigError(`${settingLabel(name)} must be one of ${choices.join(', ')}, got "${value}"`);
  return value;
}

/** A whole number in a range; `unit` names it in the message (" number of seconds"). */
export function parseInteger(name: string, value: string, minimum: number, maximum: number, unit = ''): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < minimum || number > maximum) throw new ConfigError(`${name} must be an integer${unit} from ${minimum} to ${maximum}, got "${value}"`);
  return number;
}

function parseDatabase(setting: (name: OptionName) => string) {
  const url = textSetting(setting, 'database-url');
  if (url === undefined) return undefined;
  return {
    url,
    replicaUrls: textSetting<string[]>(setting, 'database-replica-urls') ?? [],
    poolSize: integerSetting(setting, 'database-pool-size'),
    statementTimeoutMs: integerSetting(setting, 'database-statement-timeout'),
    connectTimeoutMs: DEFAULT_POSTGRES_SETTINGS.connectTimeoutMs,
    migrate: parseBoolean('migrate', setting('migrate')),
  };
}

function parseProgress(setting: (name: OptionName) => string, isTerminal: boolean): ProgressMode {
  const value = choiceSetting(setting, 'progress');
  return value === 'auto' ? (isTerminal ? 'bar' : 'lines') : (value as ProgressMode);
}

function optionsOf(command: Command): [OptionName, OptionSpec][] {
  return (Object.entries(CONFIG_OPTIONS) as [OptionName, OptionSpec][]).filter(([, option]) => option.commands.includes(command));
}

function parse(command: Command, args: string[], env: NodeJS.ProcessEnv) {
  const options = optionsOf(command);
  const { values, positionals } = parseArgs({
    args,
    options: Object.fromEntries(options.map(([name, option]) => [name, { type: option.flag ? ('boolean' as const) : ('string' as const) }])),
    strict: true,
    allowPositionals: command === 'import' || command === 'validate' || command === 'use' || command === 'export' || command === 'sync',
  });
  const setting = (name: OptionName): string => {
    const option: OptionSpec = CONFIG_OPTIONS[name];
    const value = values[name];
    if (typeof value === 'boolean') return String(value);
    // An empty variable counts as unset, as in most tools.
    return value ?? (env[option.env] || undefined) ?? option.default;
  };
  return { setting, positionals };
}

export function loadServeConfig(args: string[], env: NodeJS.ProcessEnv = process.env, isTerminal = false): ServeConfig {
  const { setting } = parse('serve', args, env);
  const logLevel = choiceSetting(setting, 'log-level');
  const port = integerSetting(setting, 'port');
  const metrics = parseMetrics(setting);
  if (metrics !== undefined && metrics.port === port && port !== 0) throw new ConfigError(`metrics port must differ from port (both ${port}); unset it to serve /metrics on the main port`);
  return {
    port,
    host: setting('host'),
    dataDir: resolve(setting('data-dir')),
    publicBaseUrl: textSetting(setting, 'public-base-url'),
    trustProxy: textSetting<TrustProxy>(setting, 'trust-proxy') ?? false,
    metrics,
    logLevel,
    progress: parseProgress(setting, isTerminal),
    cacheMaxAge: integerSetting(setting, 'cache-max-age'),
    responseCacheBytes: integerSetting(setting, 'response-cache-size') * 2 ** 20,
    database: parseDatabase(setting),
    rateLimitPerMinute: integerSetting(setting, 'rate-limit'),
    maxExports: integerSetting(setting, 'max-exports'),
    maxEventLoopDelayMs: integerSetting(setting, 'max-event-loop-delay'),
    shutdownTimeoutMs: integerSetting(setting, 'shutdown-timeout') * 1000,
    workers: integerSetting(setting, 'workers'),
    rootDetails: parseRootDetails(setting),
  };
}

export function loadSyncConfig(args: string[], env: NodeJS.ProcessEnv = process.env, isTerminal = false): ImportConfig & { source: string; databaseUrl: string | undefined } {
  const { setting, positionals } = parse('sync', args, env);
  const [source] = positionals;
  if (positionals.length !== 1 || !/^https?:\/\//i.test(source!) || !URL.canParse(source!)) throw new ConfigError('sync needs one source: the base URL of another instance, e.g. https://example.org/api/hsds/v3');
  return { ...importSettings(setting, 'sync', isTerminal, env), sources: [source!], source: source!, databaseUrl: textSetting(setting, 'database-url') };
}

function importSettings(setting: (name: OptionName) => string, command: 'import' | 'validate' | 'sync', isTerminal: boolean, env: NodeJS.ProcessEnv): Omit<ImportConfig, 'sources'> {
  return {
    dataDir: resolve(command === 'validate' ? CONFIG_OPTIONS['data-dir'].default : setting('data-dir')),
    maxErrors: integerSetting(setting, 'max-errors'),
    strict: parseBoolean('strict', setting('strict')),
    progress: parseProgress(setting, isTerminal),
    database: command === 'validate' ? undefined : parseDatabase(setting),
    harvest: { ...DEFAULT_HARVEST, requestsPerSecond: integerSetting(setting, 'harvest-rate'), header: sourceHeader(env) },
  };
}

export function loadImportConfig(command: 'import' | 'validate', args: string[], env: NodeJS.ProcessEnv = process.env, isTerminal = false): ImportConfig {
  const { setting, positionals } = parse(command, args, env);
  if (positionals.length === 0) throw new ConfigError(`${command} needs at least one source (a file or directory)`);
  const { dataDir, maxErrors, strict, progress, database, harvest } = importSettings(setting, command, isTerminal, env);
  return { dataDir, maxErrors, strict, progress, sources: positionals, database, harvest };
}

/**
 * The header an HSDS API given as a source needs (a key: `Authorization: Bearer …`), from the
 * environment only, so it is in no command line, shell history or process list. Never printed.
 */
function sourceHeader(env: NodeJS.ProcessEnv): HarvestOptions['header'] {
  const given = env.HSDS_SOURCE_HEADER?.trim();
  if (given === undefined || given === '') return undefined;
  const colon = given.indexOf(':');
  const name = colon === -1 ? '' : given.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new ConfigError('HSDS_SOURCE_HEADER must be a header, `Name: value` (e.g. `Authorization: Bearer <key>`)');
  return { name, value: given.slice(colon + 1).trim() };
}

/** The dataset shipped in `data/` (see data/README.md for sources and licences): one source argument. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../data/', import.meta.url)).replace(/\/$/, '');

/**
 * The import serve runs when nothing was ever published: import's own settings at their defaults (not
 * the environment's: the bundled data has warnings that STRICT would refuse), into serve's data
 * directory (or `database`, already migrated), shown with serve's progress display.
 */
export function defaultDatasetImport(serve: ServeConfig, database: ServeConfig['database'], sources: string[]): ImportConfig {
  const defaults = loadImportConfig('import', sources, {});
  return { ...defaults, dataDir: serve.dataDir, progress: serve.progress, database: database && { url: database.url, migrate: false } };
}

export function loadUseConfig(args: string[], env: NodeJS.ProcessEnv = process.env): UseConfig {
  const { setting, positionals } = parse('use', args, env);
  if (positionals.length !== 1) throw new ConfigError('use needs one snapshot: the file name of a snapshot in the data directory\'s snapshots/');
  return { dataDir: resolve(setting('data-dir')), snapshot: positionals[0]! };
}

export function loadExportConfig(args: string[], env: NodeJS.ProcessEnv = process.env): ExportConfig {
  const { setting, positionals } = parse('export', args, env);
  if (positionals.length !== 1) throw new ConfigError('export needs one folder to write the package into (new, or empty)');
  return { dataDir: resolve(setting('data-dir')), databaseUrl: textSetting(setting, 'database-url'), directory: resolve(positionals[0]!) };
}

export function loadMigrateConfig(args: string[], env: NodeJS.ProcessEnv = process.env): MigrateConfig {
  const { setting } = parse('migrate', args, env);
  const databaseUrl = textSetting(setting, 'database-url');
  if (databaseUrl === undefined) throw new ConfigError('migrate needs the PostgreSQL database: --database-url or DATABASE_URL');
  return { databaseUrl };
}

/** What --help says an option takes, before its default: a range, or the values it may take. */
function optionValues(option: OptionSpec): string {
  if (option.integer !== undefined) return `${option.integer.min} to ${option.integer.max}; `;
  if (option.form !== undefined) return `${FORMS[option.form].says}${option.list ? ', comma-separated' : ''}; `;
  return option.choices === undefined ? '' : `${option.choices.join(', ')}; `;
}

/** A command's options for its --help: each flag, then its environment variable, beside what it sets. */
export function configHelp(command: Command): { term: string[]; description: string }[] {
  return optionsOf(command).map(([name, option]) => ({
    term: [option.flag ? `--${name}` : `--${name} <value>`, option.env],
    description: `${option.help} (${optionValues(option)}default: ${option.default || 'unset'})`,
  }));
}
