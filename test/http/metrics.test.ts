import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API, useTestApp } from '../helpers/app.ts';

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
});
