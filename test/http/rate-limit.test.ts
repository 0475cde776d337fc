import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, useTestApp } from '../helpers/app.ts';

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

  it('is off by default', async () => {
    const { app } = unlimited();
    for (let index = 0; index < 20; index++) assert.equal((await app.inject(`${API}/`)).statusCode, 200);
  });
});
