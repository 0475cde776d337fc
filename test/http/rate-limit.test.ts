import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, useTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';

describe('the optional rate limit', () => {
  const limited = useTestApp(undefined, { rateLimitPerMinute: 3 });
  const cachedLimited = useTestApp(undefined, { rateLimitPerMinute: 3 });
  const unlimited = useTestApp();

  it('answers past the limit with a 429 problem saying when to come back, never cached', async () => {
    const { app } = limited();
    for (let index = 0; index < 3; index++) assert.equal((await app.inject(`${API}/organizations?page=${index + 1}`)).statusCode, 200);
    const refused = await app.inject(`${API}/organizations`);
    assert.equal(refused.statusCode, 429);
    assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
    assert.match(JSON.parse(refused.body).detail, /more than 3 requests in a minute/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.headers['cache-control'], 'no-store');
    for (const probe of ['/healthz', '/readyz', '/metrics']) assert.equal((await app.inject(probe)).statusCode, 200, probe);
  });

  it('counts responses sent from the response cache too', async () => {
    const { app } = cachedLimited();
    for (let index = 0; index < 3; index++) assert.equal((await app.inject(`${API}/taxonomies`)).statusCode, 200);
    assert.equal((await app.inject(`${API}/taxonomies`)).statusCode, 429);
  });

  describe('keys on the client address the configuration trusts, so a rotating X-Forwarded-For gains nothing', () => {
    const untrusting = useTestApp(undefined, { rateLimitPerMinute: 3 });
    const oneHop = useTestApp(undefined, { rateLimitPerMinute: 3, trustProxy: 1 });
    const rotating = (index: number, client = '198.51.100.7') => ({ 'x-forwarded-for': `203.0.113.${index}, ${client}` });
    const statuses = async (app: TestApp['app'], requests: { headers: Record<string, string>; remoteAddress?: string }[]) => {
      const answers: number[] = [];
      for (const request of requests) answers.push((await app.inject({ url: `${API}/taxonomies`, ...request })).statusCode);
      return answers;
    };

    it('with no proxy trusted: the connection\'s address', async () => {
      const requests = [1, 2, 3, 4, 5].map((index) => ({ headers: { 'x-forwarded-for': `203.0.113.${index}` } }));
      assert.deepEqual(await statuses(untrusting().app, requests), [200, 200, 200, 429, 429]);
    });

    it('with --trust-proxy 1: the address the nearest proxy saw (the last in X-Forwarded-For), whatever comes before it', async () => {
      const { app } = oneHop();
      assert.deepEqual(await statuses(app, [1, 2, 3, 4].map((index) => ({ headers: rotating(index) }))), [200, 200, 200, 429]);
      // Another client behind the same proxy has a count of its own.
      assert.deepEqual(await statuses(app, [{ headers: rotating(5, '198.51.100.8') }]), [200]);
      // A client reaching the server directly is not a proxy: its own address counts.
      const direct = [6, 7, 8, 9].map((index) => ({ headers: { 'x-forwarded-for': `203.0.113.${index}` }, remoteAddress: '192.0.2.1' }));
      assert.deepEqual(await statuses(app, direct), [200, 200, 200, 429]);
    });
  });

  it('is off by default', async () => {
    const { app } = unlimited();
    for (let index = 0; index < 20; index++) assert.equal((await app.inject(`${API}/`)).statusCode, 200);
  });
});
