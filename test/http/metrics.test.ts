import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, startTestApp, useTestApp } from '../helpers/app.ts';

/** The value of a sample line `name{labels} value`, or undefined. */
const sample = (text: string, name: string, labels = ''): number | undefined => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}${labels === '' ? ' ' : `{${labels}} `}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('/metrics', () => {
  const test = useTestApp();
  const scrape = async () => {
    const response = await test().app.inject('/metrics');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(response.headers['cache-control'], 'no-store');
    return response.body;
  };

  it('counts requests and their durations per route pattern and status, unrouted ones as one', async () => {
    const { app, build } = test();
    await app.inject(`${API}/organizations?per_page=1`);
    await app.inject(`${API}/organizations?per_page=1`);
    await app.inject(`${API}/organizations/nope`);
    for (let index = 0; index < 3; index++) await app.inject(`/no/such/path/${index}`);
    const text = await scrape();
    assert.equal(sample(text, 'hsds_http_requests_total', `method="GET",route="${API}/organizations",status="200"`), 2);
    assert.equal(sample(text, 'hsds_http_requests_total', `method="GET",route="${API}/organizations/:id",status="404"`), 1);
    assert.equal(sample(text, 'hsds_http_requests_total', 'method="GET",route="unmatched",status="404"'), 3);
    assert.equal(sample(text, 'hsds_http_request_duration_seconds_count', `method="GET",route="${API}/organizations",status="200"`), 2);
    assert.equal(sample(text, 'hsds_dataset_info', `version="${build.version}"`), 1);
    assert.equal(sample(text, 'hsds_dataset_published_timestamp_seconds'), Date.parse(build.publishedAt) / 1000);
    assert.equal(sample(text, 'hsds_dataset_organizations'), build.organizations);
    assert.equal(sample(text, 'hsds_response_cache_hits_total'), 1, 'the second identical request');
    assert.ok((sample(text, 'hsds_response_cache_misses_total') ?? 0) >= 2);
    assert.ok((sample(text, 'hsds_response_cache_bytes') ?? 0) > 0);
    assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0);
  });

  it('is never offered to other origins (no CORS), unlike the API', async () => {
    const response = await test().app.inject({ url: '/metrics', headers: { origin: 'https://app.example' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['access-control-allow-origin'], undefined);
    assert.equal(response.headers['access-control-expose-headers'], undefined);
    const preflight = await test().app.inject({ method: 'OPTIONS', url: '/metrics', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.equal((await test().app.inject({ url: `${API}/`, headers: { origin: 'https://app.example' } })).headers['access-control-allow-origin'], '*');
  });

  it('given a metrics port, is served there only, still counting the main port\'s requests; probes stay on the main port', async () => {
    const separate = await startTestApp(undefined, { metrics: { port: 0, host: '127.0.0.1' } });
    try {
      const { app } = separate;
      const address = app.metricsServer!.address() as { address: string; port: number };
      assert.equal(address.address, '127.0.0.1');
      const metricsUrl = `http://127.0.0.1:${address.port}`;
      await app.inject(`${API}/taxonomies`);
      assert.equal((await app.inject('/metrics')).statusCode, 404, 'not on the main port');
      for (const probe of ['/healthz', '/readyz']) assert.equal((await app.inject(probe)).statusCode, 200, probe);

      const scrape = await fetch(`${metricsUrl}/metrics`, { headers: { origin: 'https://app.example' } });
      assert.equal(scrape.status, 200);
      assert.match(String(scrape.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
      assert.equal(scrape.headers.get('cache-control'), 'no-store');
      assert.equal(scrape.headers.get('access-control-allow-origin'), null);
      const text = await scrape.text();
      assert.equal(sample(text, 'hsds_http_requests_total', `method="GET",route="${API}/taxonomies",status="200"`), 1);
      assert.equal(sample(text, 'hsds_http_requests_total', 'method="GET",route="unmatched",status="404"'), 1, 'the /metrics asked of the main port');
      const head = await fetch(`${metricsUrl}/metrics`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), '');

      for (const [path, method, status] of [
        ['/healthz', 'GET', 404],
        [`${API}/`, 'GET', 404],
        ['/metrics', 'POST', 405],
      ] as const) {
        const response = await fetch(`${metricsUrl}${path}`, { method });
        assert.equal(response.status, status, `${method} ${path}`);
        assert.match(String(response.headers.get('content-type')), /^application\/problem\+json/, `${method} ${path}`);
        assert.equal((await response.json()).status, status);
      }
    } finally {
      await separate.close();
    }
    assert.equal(separate.app.metricsServer!.listening, false, 'closed with the app');
  });
});
