import { parseArgs } from 'node:util';
import { resolve } from 'node:path';

/**
 * Every setting, as a flag or an environment variable (flags win). Documented in the README.
 */
export interface Config {
  port: number;
  host: string;
  /** The SQLite snapshot served; built from data/ when missing. */
  databasePath: string;
  /** Absolute base for links, e.g. https://api.example.org; when unset, taken from each request. */
  publicBaseUrl: string | undefined;
  /** Honour X-Forwarded-Proto / X-Forwarded-Host (only behind a proxy you control). */
  trustProxy: boolean;
  logLevel: string;
}

export const CONFIG_OPTIONS = {
  port: { type: 'string', env: 'PORT', default: '8080', help: 'TCP port to listen on' },
  host: { type: 'string', env: 'HOST', default: '0.0.0.0', help: 'interface to listen on' },
  database: { type: 'string', env: 'DATABASE_PATH', default: 'var/hsds.sqlite', help: 'SQLite snapshot file' },
  'public-base-url': { type: 'string', env: 'PUBLIC_BASE_URL', default: '', help: 'absolute base URL used in links' },
  'trust-proxy': { type: 'string', env: 'TRUST_PROXY', default: 'false', help: 'true to honour X-Forwarded-* headers' },
  'log-level': { type: 'string', env: 'LOG_LEVEL', default: 'info', help: 'fatal, error, warn, info, debug, trace or silent' },
} as const;

type OptionName = keyof typeof CONFIG_OPTIONS;

export class ConfigError extends Error {}

function parseBoolean(name: string, value: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no|)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new ConfigError(`port must be an integer from 0 to 65535, got "${value}"`);
  return port;
}

function parseBaseUrl(value: string): string | undefined {
  if (value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`public base URL must be an absolute http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`public base URL must use http or https, got "${value}"`);
  if (url.search !== '' || url.hash !== '') throw new ConfigError('public base URL must not have a query or fragment');
  return url.href.replace(/\/+$/, '');
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(args: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const { values } = parseArgs({
    args,
    options: Object.fromEntries(Object.keys(CONFIG_OPTIONS).map((name) => [name, { type: 'string' as const }])),
    strict: true,
    allowPositionals: false,
  });
  const setting = (name: OptionName): string => {
    const option = CONFIG_OPTIONS[name];
    return (values[name] as string | undefined) ?? env[option.env] ?? option.default;
  };
  const logLevel = setting('log-level');
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`log level must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    port: parsePort(setting('port')),
    host: setting('host'),
    databasePath: resolve(setting('database')),
    publicBaseUrl: parseBaseUrl(setting('public-base-url')),
    trustProxy: parseBoolean('trust proxy', setting('trust-proxy')),
    logLevel,
  };
}

export function configHelp(): string {
  return Object.entries(CONFIG_OPTIONS)
    .map(([name, option]) => `  --${name.padEnd(16)} ${option.env.padEnd(16)} ${option.help} (default: ${option.default || 'unset'})`)
    .join('\n');
}
