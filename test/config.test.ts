import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIG_OPTIONS } from '../src/config-options.ts';
import type { OptionSpec } from '../src/config-options.ts';
import { ConfigError, DEFAULT_HARVEST, defaultDatasetImport, loadImportConfig, loadMigrateConfig, loadServeConfig } from '../src/config.ts';

const loadConfig = (args: string[], env: NodeJS.ProcessEnv) => loadServeConfig(args, env);

describe('configuration', () => {
  it('has working defaults', () => {
    assert.deepEqual(loadConfig([], {}), {
      port: 8080,
      host: '0.0.0.0',
      dataDir: resolve('var/hsds'),
      publicBaseUrl: undefined,
      trustProxy: false,
      metrics: undefined,
      logLevel: 'info',
      progress: 'lines',
      cacheMaxAge: 300,
      responseCacheBytes: 64 * 2 ** 20,
      database: undefined,
      rateLimitPerMinute: 0,
      maxExports: 8,
      maxEventLoopDelayMs: 500,
      shutdownTimeoutMs: 10_000,
      workers: 1,
      rootDetails: {},
    });
  });

  it('reads the number of workers, and refuses none at all', () => {
    assert.equal(loadConfig(['--workers', '4'], {}).workers, 4);
    assert.equal(loadConfig([], { WORKERS: '2' }).workers, 2);
    assert.throws(() => loadConfig(['--workers', '0'], {}), /workers/);
  });

  it('reads what the root object says about the feed, and leaves out what is not set', () => {
    const env = {
      API_DESCRIPTION: ' Nonprofits of Wyoming. ',
      DATA_GUIDE: 'https://example.org/guide',
      PUBLISHER_NAME: 'Example 211',
      PUBLISHER_IDENTIFIER: 'US-EIN-990000002',
      PUBLISHER_EMAIL: 'data@example.org',
      PUBLISHER_WEBSITE: 'https://example.org',
      PUBLISHER_ADDITIONAL_WEBSITES: 'https://example.org/a, https://example.org/b',
    };
    assert.deepEqual(loadConfig([], env).rootDetails, {
      description: 'Nonprofits of Wyoming.',
      data_guide: 'https://example.org/guide',
      publisher: {
        name: 'Example 211',
        identifier: 'US-EIN-990000002',
        email: 'data@example.org',
        website: 'https://example.org',
        additional_websites: ['https://example.org/a', 'https://example.org/b'],
      },
    });
    assert.deepEqual(loadConfig(['--publisher-name', 'Example 211'], {}).rootDetails, { publisher: { name: 'Example 211' } });
  });

  it('reads the PostgreSQL settings, and never echoes a database URL it refuses', () => {
    const database = loadConfig(['--database-replica-urls', 'postgres://r1/db, postgresql://r2/db', '--migrate'], {
      DATABASE_URL: 'postgres://user:secret@db.example.org:5432/hsds',
      DATABASE_POOL_SIZE: '25',
    }).database;
    assert.deepEqual(database, {
      url: 'postgres://user:secret@db.example.org:5432/hsds',
      replicaUrls: ['postgres://r1/db', 'postgresql://r2/db'],
      poolSize: 25,
      statementTimeoutMs: 5000,
      connectTimeoutMs: 1000,
      migrate: true,
    });
    assert.equal(loadConfig(['--database-url', 'postgres://db/x', '--database-statement-timeout', '250'], {}).database?.statementTimeoutMs, 250);
    assert.throws(() => loadConfig(['--database-url', 'mysql://user:secret@db/x'], {}), (error: Error) => /postgres:\/\//.test(error.message) && !error.message.includes('secret'));
    assert.throws(() => loadConfig(['--database-url', 'postgres://db/x', '--database-replica-urls', 'http://r'], {}), /replica/);
    assert.throws(() => loadConfig(['--database-url', 'postgres://db/x', '--database-pool-size', '0'], {}), /pool size/);
    assert.throws(() => loadConfig(['--database-url', 'postgres://db/x', '--database-statement-timeout', 'soon'], {}), /statement timeout/);
    assert.equal(loadImportConfig('import', ['--database-url', 'postgres://db/x', 'a.csv'], {}).database?.url, 'postgres://db/x');
    assert.equal(loadImportConfig('validate', ['a.csv'], { DATABASE_URL: 'postgres://db/x' }).database, undefined, 'validate writes nowhere');
    assert.deepEqual(loadMigrateConfig([], { DATABASE_URL: 'postgres://db/x' }), { databaseUrl: 'postgres://db/x' });
    assert.throws(() => loadMigrateConfig([], {}), /DATABASE_URL/);
  });

  it('reads the response cache size in MiB, 0 turning it off, and refuses anything else', () => {
    assert.equal(loadConfig(['--response-cache-size', '0'], {}).responseCacheBytes, 0);
    assert.equal(loadConfig([], { RESPONSE_CACHE_SIZE: '8' }).responseCacheBytes, 8 * 2 ** 20);
    for (const value of ['-1', '0.5', 'big', '70000']) {
      assert.throws(() => loadConfig([`--response-cache-size=${value}`], {}), /response cache size/);
    }
  });

  it('reads the cache max age, and refuses one that is not a whole number of seconds', () => {
    assert.equal(loadConfig(['--cache-max-age', '0'], {}).cacheMaxAge, 0);
    assert.equal(loadConfig([], { CACHE_MAX_AGE: '60' }).cacheMaxAge, 60);
    for (const value of ['-1', '1.5', 'ten', '99999999']) assert.throws(() => loadConfig([`--cache-max-age=${value}`], {}), /cache max age/);
  });

  it('reads the shutdown timeout in seconds, and refuses none at all', () => {
    assert.equal(loadConfig(['--shutdown-timeout', '30'], {}).shutdownTimeoutMs, 30_000);
    assert.equal(loadConfig([], { SHUTDOWN_TIMEOUT: '2' }).shutdownTimeoutMs, 2000);
    for (const value of ['0', '-1', '0.5', 'soon']) assert.throws(() => loadConfig([`--shutdown-timeout=${value}`], {}), /shutdown timeout/);
  });

  it('reads the export limit, and refuses none at all', () => {
    assert.equal(loadConfig(['--max-exports', '2'], {}).maxExports, 2);
    assert.equal(loadConfig([], { MAX_EXPORTS: '16' }).maxExports, 16);
    for (const value of ['0', '-1', '1.5', 'many']) assert.throws(() => loadConfig([`--max-exports=${value}`], {}), /max exports/);
  });

  it('reads the event-loop delay that sheds requests, 0 turning shedding off', () => {
    assert.equal(loadConfig(['--max-event-loop-delay', '0'], {}).maxEventLoopDelayMs, 0);
    assert.equal(loadConfig([], { MAX_EVENT_LOOP_DELAY: '200' }).maxEventLoopDelayMs, 200);
    for (const value of ['-1', '0.5', 'soon', '60001']) assert.throws(() => loadConfig([`--max-event-loop-delay=${value}`], {}), /max event loop delay/);
  });

  it('reads environment variables, and flags win over them', () => {
    const env = { PORT: '9000', DATA_DIR: '/tmp/x', PUBLIC_BASE_URL: 'https://api.example.org/', TRUST_PROXY: '1' };
    const config = loadConfig(['--port', '9100'], env);
    assert.equal(config.port, 9100);
    assert.equal(config.dataDir, '/tmp/x');
    assert.equal(config.publicBaseUrl, 'https://api.example.org');
    assert.equal(config.trustProxy, 1);
  });

  it('trusts a number of proxies or a list of their addresses, and nothing by default', () => {
    assert.equal(loadConfig(['--trust-proxy', '2'], {}).trustProxy, 2);
    for (const none of ['false', '0', 'no', '']) assert.equal(loadConfig([], { TRUST_PROXY: none }).trustProxy, false, none);
    assert.deepEqual(loadConfig([], { TRUST_PROXY: '10.0.0.5, 192.168.0.0/16,::1,fd00::/8,loopback,uniquelocal' }).trustProxy, [
      '10.0.0.5',
      '192.168.0.0/16',
      '::1',
      'fd00::/8',
      'loopback',
      'uniquelocal',
    ]);
    for (const wrong of ['proxy.example', '10.0.0.0/33', '10.0.0.1/8/8', '::1/129', '10.0.0.1,,10.0.0.2', '10.0.0.0/x']) {
      assert.throws(() => loadConfig(['--trust-proxy', wrong], {}), { message: `trust proxy must be 0 to 16, or IP addresses, CIDR ranges or loopback, linklocal, uniquelocal, comma-separated, got "${wrong}"` }, wrong);
    }
    assert.throws(() => loadConfig(['--trust-proxy', '17'], {}), { message: /^trust proxy must be 0 to 16, or/ });
  });

  it('refuses to trust every proxy, saying why and what to give instead', () => {
    for (const everything of ['true', 'TRUE', 'yes']) {
      assert.throws(
        () => loadConfig([], { TRUST_PROXY: everything }),
        (error: Error) =>
          error instanceof ConfigError &&
          !error.message.includes('\n') &&
          /any client/.test(error.message) &&
          /number of proxies in front \(e\.g\. 1\)/.test(error.message) &&
          /their addresses/.test(error.message),
      );
    }
  });

  it('serves /metrics on a port of its own when given one, on 127.0.0.1 unless told otherwise', () => {
    assert.deepEqual(loadConfig(['--metrics-port', '9464'], {}).metrics, { port: 9464, host: '127.0.0.1' });
    assert.deepEqual(loadConfig([], { METRICS_PORT: '9464', METRICS_HOST: '10.1.2.3' }).metrics, { port: 9464, host: '10.1.2.3' });
    assert.equal(loadConfig([], { METRICS_HOST: '10.1.2.3' }).metrics, undefined, 'no port, no second listener');
    assert.throws(() => loadConfig(['--metrics-port', 'x'], {}), /metrics port must be an integer/);
    assert.throws(() => loadConfig(['--metrics-port', '8080'], {}), /metrics port must differ from port/);
  });

  for (const [args, message] of [
    [['--port', 'http'], /port must be an integer/],
    [['--port', '70000'], /port must be an integer/],
    [['--public-base-url', 'api.example.org'], /absolute http\(s\) URL/],
    [['--public-base-url', 'ftp://api.example.org'], /^public base url must be an absolute http\(s\) URL without a query or fragment, got "ftp:\/\/api\.example\.org"$/],
    [['--public-base-url', 'https://api.example.org/?x=1'], /without a query or fragment/],
    [['--trust-proxy', 'maybe'], /trust proxy must be/],
    [['--log-level', 'loud'], /^log level must be one of fatal, error, warn, info, debug, trace, silent, got "loud"$/],
    [['--progress', 'fancy'], /^progress must be one of bar, lines, none, auto, got "fancy"$/],
    [['--workers', '0'], /^workers must be an integer from 1 to 256, got "0"$/],
    [['--publisher-identifier', '530196605'], /org-id\.guide identifier/],
    [['--publisher-email', 'nobody'], /publisher email/],
    [['--publisher-website', 'example.org'], /publisher website must be an absolute http\(s\) URL/],
    [['--publisher-additional-websites', 'https://a.example, mailto:x@example.org'], /^each of publisher additional websites must be an absolute http\(s\) URL, got "mailto:x@example\.org"$/],
    [['--data-guide', '/guide'], /data guide/],
    [['--description', 'two\nlines'], /plain text on one line/],
  ] as const) {
    it(`refuses ${args.join(' ')}`, () => {
      assert.throws(() => loadConfig([...args], {}), (error: Error) => error instanceof ConfigError && message.test(error.message));
    });
  }

  it('refuses unknown flags', () => {
    assert.throws(() => loadConfig(['--prot', '1'], {}), /Unknown option/);
    assert.throws(() => loadImportConfig('import', ['--port', '1', 'data'], {}), /Unknown option/);
  });

  it('reads import options: sources, error limit, strictness, progress', () => {
    assert.deepEqual(loadImportConfig('import', ['--strict', '--max-errors', '5', 'a.csv', 'b/'], {}, true), {
      dataDir: resolve('var/hsds'),
      maxErrors: 5,
      strict: true,
      progress: 'bar',
      sources: ['a.csv', 'b/'],
      database: undefined,
      harvest: { ...DEFAULT_HARVEST, header: undefined },
    });
    const fromEnv = loadImportConfig('import', ['x'], { MAX_ERRORS: '7', STRICT: 'true', PROGRESS: 'none', DATA_DIR: '/srv/hsds', HARVEST_RATE: '0', HSDS_SOURCE_HEADER: 'Authorization: Bearer k3y' });
    assert.deepEqual([fromEnv.maxErrors, fromEnv.strict, fromEnv.progress, fromEnv.dataDir], [7, true, 'none', '/srv/hsds']);
    assert.deepEqual(fromEnv.harvest, { ...DEFAULT_HARVEST, requestsPerSecond: 0, header: { name: 'Authorization', value: 'Bearer k3y' } });
    assert.throws(() => loadImportConfig('import', ['x'], { HSDS_SOURCE_HEADER: 'Bearer k3y' }), /HSDS_SOURCE_HEADER must be a header, `Name: value`/);
    assert.throws(() => loadImportConfig('validate', [], {}), /at least one source/);
    assert.throws(() => loadImportConfig('import', ['--max-errors', '0', 'x'], {}), /max errors/);
  });

  it("imports the default dataset, when serve finds nothing published, by import's own defaults into serve's store", () => {
    const serve = loadServeConfig(['--data-dir', '/srv/hsds', '--progress', 'none'], { MAX_ERRORS: '3', STRICT: 'true' });
    const database = loadServeConfig(['--database-url', 'postgres://db/x', '--migrate'], {}).database;
    assert.deepEqual(defaultDatasetImport(serve, undefined, ['/data']), { dataDir: '/srv/hsds', maxErrors: 50, strict: false, progress: 'none', sources: ['/data'], database: undefined, harvest: { ...DEFAULT_HARVEST, header: undefined } });
    assert.deepEqual(defaultDatasetImport(serve, database, ['/data']).database, { url: 'postgres://db/x', migrate: false }, 'migrated before, by serve');
  });

  it('is documented in docs/operations.md as the options table says: each flag, its variable, default and commands', () => {
    const doc = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `--([a-z-]+)` \| `([A-Z_]+)` \| ([^|]+) \| ([^|]+) \|/gm)].map(([, flag, env, shown, commands]) => ({
      flag,
      env,
      default: shown!.trim() === 'unset' ? '' : shown!.trim().replaceAll('`', ''),
      commands: commands!.split(',').map((command) => command.trim()).sort(),
    }));
    const options = (Object.entries(CONFIG_OPTIONS) as [string, OptionSpec][]).map(([flag, option]) => ({ flag, env: option.env, default: option.default, commands: [...option.commands].sort() }));
    assert.deepEqual(rows.sort((a, b) => a.flag!.localeCompare(b.flag!)), options.sort((a, b) => a.flag.localeCompare(b.flag)));
  });
});
