import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import type { AppOptions } from '../../src/http/app.ts';
import { buildSnapshot } from '../../src/build/build.ts';
import type { BuildResult } from '../../src/build/build.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fixedStore } from '../../src/store/store.ts';
import { fixtureDataset } from '../fixtures/dataset.ts';
import { checkEveryResponse } from './hsds-schemas.ts';

export const API = '/api/hsds/v3';

/** The dataset version the app serves now, from its API root; undefined while it cannot answer. */
export async function versionOf(app: FastifyInstance): Promise<string | undefined> {
  const response = await app.inject(`${API}/`);
  return response.statusCode === 200 ? (JSON.parse(response.body) as { dataset: { version: string } }).dataset.version : undefined;
}

export function temporaryDirectory(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'hsds-org-api-test-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface TestApp {
  app: FastifyInstance;
  build: BuildResult;
  /** The snapshot file it serves. */
  snapshot: string;
  close: () => Promise<void>;
}

/** Builds a snapshot of `input` (the fixture by default) in a temporary directory and an app serving it. */
export async function startTestApp(input: DatasetInput = fixtureDataset(), options: Partial<AppOptions> = {}): Promise<TestApp> {
  const directory = temporaryDirectory();
  const build = await buildSnapshot(input, join(directory.path, 'snapshot.sqlite'));
  const store = new SqliteStore(join(directory.path, 'snapshot.sqlite'));
  const app = await buildApp({ stores: fixedStore(store), logLevel: 'silent', ...options });
  const invalidResponses = checkEveryResponse(app);
  await app.ready();
  return {
    app,
    build,
    snapshot: join(directory.path, 'snapshot.sqlite'),
    close: async () => {
      await app.close();
      directory.remove();
      assert.deepEqual(invalidResponses, [], 'every document answered validates against HSDS 3.0 and 3.2.3');
    },
  };
}

export interface JsonResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

export async function getJson(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, headers: response.headers, text: response.body, body: response.body === '' ? undefined : JSON.parse(response.body) };
}

/** Every item of a list under the API path, read with `format=ndjson`. */
export async function allItems(app: FastifyInstance, path: string): Promise<any[]> {
  const response = await app.inject({ url: `${API}${path}${path.includes('?') ? '&' : '?'}format=ndjson` });
  if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body}`);
  return response.body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
}

/** The path and query of an absolute link, for app.inject. */
export const pathOf = (link: string): string => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

/** Starts a test app before the enclosing suite's tests and closes it after them. */
export function useTestApp(...args: Parameters<typeof startTestApp>): () => TestApp {
  let test: TestApp | undefined;
  before(async () => {
    test = await startTestApp(...args);
  });
  after(() => test?.close());
  return () => test!;
}

/** A server of `handler` on a free loopback port (another HSDS API, for harvest and sync tests), and the API's base URL there. */
export async function listenOnLoopback(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ server: Server; base: string; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}${API}`, close };
}
