import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  it('has working defaults', () => {
    assert.deepEqual(loadConfig([], {}), {
      port: 8080,
      host: '0.0.0.0',
      databasePath: resolve('var/hsds.sqlite'),
      publicBaseUrl: undefined,
      trustProxy: false,
      logLevel: 'info',
    });
  });

  it('reads environment variables, and flags win over them', () => {
    const env = { PORT: '9000', DATABASE_PATH: '/tmp/x.sqlite', PUBLIC_BASE_URL: 'https://api.example.org/', TRUST_PROXY: 'true' };
    const config = loadConfig(['--port', '9100'], env);
    assert.equal(config.port, 9100);
    assert.equal(config.databasePath, '/tmp/x.sqlite');
    assert.equal(config.publicBaseUrl, 'https://api.example.org');
    assert.equal(config.trustProxy, true);
  });

  for (const [args, message] of [
    [['--port', 'http'], /port must be an integer/],
    [['--port', '70000'], /port must be an integer/],
    [['--public-base-url', 'api.example.org'], /absolute http\(s\) URL/],
    [['--public-base-url', 'ftp://api.example.org'], /http or https/],
    [['--trust-proxy', 'maybe'], /true or false/],
    [['--log-level', 'loud'], /log level/],
  ] as const) {
    it(`refuses ${args.join(' ')}`, () => {
      assert.throws(() => loadConfig([...args], {}), (error: Error) => error instanceof ConfigError && message.test(error.message));
    });
  }

  it('refuses unknown flags', () => {
    assert.throws(() => loadConfig(['--prot', '1'], {}), /Unknown option/);
  });
});
