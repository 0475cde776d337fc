import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { openPublished } from '../cli/published-stores.ts';
import { importSources } from '../cli/import.ts';
import type { ImportConfig } from '../config.ts';
import { HarvestError, PoliteClient } from '../sources/hsds-api.ts';
import { SPOOL_FILES, SpoolFile, spooledHsdsSource } from '../sources/hsds-spool.ts';
import type { Store } from '../store/store.ts';
import { counted } from '../text.ts';
import { parsedItems } from './tabular-package.ts';

/**
 * `sync <base URL of another instance>`: keeps the dataset published here a copy of another
 * instance's, through its changes feed (`/changes`, see docs/consuming.md). The first run asks for
 * the feed from nothing (`since=0`, everything); each later run for the changes since the version
 * it copied last, applies them to the dataset published here (organizations removed and changed,
 * taxonomies and terms when they changed), and publishes the result as any import does: checked,
 * atomic, nothing published on any error. A `410` (the other instance no longer keeps that
 * version) is answered by a full copy, by itself.
 *
 * What it copied last is kept in the data directory's `sync.json`: the other instance, its version,
 * and the version published here from it. When the dataset published here is no longer that one
 * (another import came between), or the other instance is not the one named, the run is a full copy.
 */

const STATE_FILE = 'sync.json';

interface SyncState {
  source: string;
  /** The other instance's version that was copied. */
  version: string;
  /** The version this copy published from it. */
  published: string;
}

function readState(dataDir: string): SyncState | undefined {
  try {
    const state = JSON.parse(readFileSync(join(dataDir, STATE_FILE), 'utf8')) as Partial<SyncState>;
    return typeof state.source === 'string' && typeof state.version === 'string' && typeof state.published === 'string' ? (state as SyncState) : undefined;
  } catch {
    return undefined;
  }
}

function writeState(dataDir: string, state: SyncState): void {
  const file = join(dataDir, STATE_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

type Json = Record<string, unknown>;

interface FeedHeader {
  since: { version: string } | null;
  version: string;
  taxonomies_changed: boolean;
  organizations_changed: number;
  organizations_removed: number;
}

/** The feed, written to the spool; the organizations it removes or replaces, by id. */
interface ReadFeed {
  header: FeedHeader;
  replaced: Set<string>;
}

/** The lines of a streamed answer, `progressed` told of every chunk that comes. */
function ndjsonLines(response: Response, progressed: () => void): AsyncIterable<string> {
  const input = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  input.on('data', progressed);
  return createInterface({ input, crlfDelay: Infinity });
}

/** Reads the feed at `url` into the spool files; undefined when it answers 410. */
async function readFeed(client: PoliteClient, url: string, files: Record<'taxonomies' | 'terms' | 'organizations', SpoolFile>): Promise<ReadFeed | undefined> {
  const answer = await client.stream(url, [410]);
  if (answer === undefined) return undefined;
  const { response, progressed, done } = answer;
  let header: FeedHeader | undefined;
  let ended = false;
  const replaced = new Set<string>();
  let line = 0;
  try {
    for await (const text of ndjsonLines(response, progressed)) {
      line++;
      if (text.trim() === '') continue;
      const at = `line ${line}`;
      let parsed: Json;
      try {
        parsed = JSON.parse(text) as Json;
      } catch {
        throw new HarvestError(url, 'is not JSON', at);
      }
      const type = parsed.type;
      const value = typeof type === 'string' ? (parsed[type] as Json | undefined) : undefined;
      if (value === undefined || typeof value !== 'object' || value === null) throw new HarvestError(url, 'is not a line of the changes feed ({"type": T, T: …})', at);
      if (ended) throw new HarvestError(url, 'follows the end line', at);
      if (type === 'changes') header = value as unknown as FeedHeader;
      else if (header === undefined) throw new HarvestError(url, 'comes before the changes line', at);
      else if (type === 'taxonomy') await files.taxonomies.write(url, `$[${line - 1}].taxonomy`, value);
      else if (type === 'taxonomy_term') await files.terms.write(url, `$[${line - 1}].taxonomy_term`, value);
      else if (type === 'removed_organization') replaced.add(String(value.id));
      else if (type === 'organization') {
        replaced.add(String(value.id));
        await files.organizations.write(url, `$[${line - 1}].organization`, value);
      } else if (type === 'end') {
        if (value.version !== header.version) throw new HarvestError(url, `ends at version ${String(value.version)}, not ${header.version}`, at);
        ended = true;
      }
    }
  } catch (error) {
    if (error instanceof HarvestError) throw error;
    throw new HarvestError(url, `the feed broke off after line ${line}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    done();
  }
  if (header === undefined) throw new HarvestError(url, 'the feed has no changes line');
  if (!ended) throw new HarvestError(url, `the feed was cut short after line ${line}: it has no end line`);
  return { header, replaced };
}

/** What the copy keeps of the dataset published here: every organization not replaced, and the taxonomies unless the feed brings them. */
async function keepLocal(store: Store, where: string, feed: ReadFeed, files: Record<'taxonomies' | 'terms' | 'organizations', SpoolFile>): Promise<number> {
  if (!feed.header.taxonomies_changed) {
    for await (const taxonomy of parsedItems(store.allTaxonomies({}))) await files.taxonomies.write(where, '$.taxonomies', taxonomy);
    for await (const term of parsedItems(store.allTaxonomyTerms({}))) await files.terms.write(where, '$.taxonomy_terms', term);
  }
  let kept = 0;
  for await (const organization of parsedItems(store.allOrganizations({}, { full: true }))) {
    if (feed.replaced.has(organization.id as string)) continue;
    kept++;
    await files.organizations.write(where, `$.organizations[${kept - 1}]`, organization);
  }
  return kept;
}

export interface SyncConfig extends ImportConfig {
  /** The other instance's base URL. */
  source: string;
  databaseUrl: string | undefined;
}

/** Runs one sync; returns the exit code (0: the copy is in step). */
export async function runSync(config: SyncConfig, write: (line: string) => void, writeResult: (line: string) => void): Promise<number> {
  const base = config.source.replace(/\/+$/, '');
  const started = performance.now();
  const state = readState(config.dataDir);
  // Nothing published here yet: the first sync is a full copy.
  const stores = (await openPublished(config.dataDir, config.databaseUrl))?.stores;
  const held = stores?.acquire();
  let released = false;
  const release = () => {
    if (!released) held?.release();
    released = true;
  };
  const folder = mkdtempSync(join(tmpdir(), 'hsds-sync-'));
  try {
    const readiness = await stores?.readiness();
    let since = '0';
    if (state !== undefined && state.source === base && readiness?.ready === true && readiness.version === state.published) since = state.version;
    else if (state !== undefined && state.source !== base) write(`note: ${config.dataDir} was a copy of ${state.source}, not ${base}: a full copy.`);
    else if (state !== undefined) write(`note: the dataset published here is no longer the one synced last (${state.published}): a full copy.`);
    const client = new PoliteClient(config.harvest);
    const open = () => ({ taxonomies: new SpoolFile(join(folder, SPOOL_FILES.taxonomies)), terms: new SpoolFile(join(folder, SPOOL_FILES.terms)), organizations: new SpoolFile(join(folder, SPOOL_FILES.organizations)) });
    let files = open();
    let feed: ReadFeed | undefined;
    try {
      feed = await readFeed(client, `${base}/changes?since=${since}`, files);
      if (feed === undefined && since !== '0') {
        write(`note: ${base} no longer keeps the changes since ${since} (410): a full copy.`);
        await Promise.all(Object.values(files).map((file) => file.close()));
        since = '0';
        files = open();
        feed = await readFeed(client, `${base}/changes?since=0`, files);
      }
      if (feed === undefined) throw new HarvestError(`${base}/changes?since=0`, 'answered 410 for everything');
      if (since !== '0' && feed.header.version === since) {
        writeResult(`Unchanged: the copy holds ${base}'s version ${since} already.`);
        return 0;
      }
      if (since !== '0') await keepLocal(held!.store, `${config.dataDir} (the dataset published here)`, feed, files);
    } catch (error) {
      if (!(error instanceof HarvestError)) throw error;
      write(`error: ${error.url}${error.path === undefined ? '' : ` [${error.path}]`}: ${error.message}`);
      writeResult('Not synced: nothing was published; the live dataset is unchanged.');
      return 1;
    } finally {
      await Promise.all(Object.values(files).map((file) => file.close()));
    }
    release();
    const what =
      since === '0'
        ? `a full copy of ${base}'s version ${feed.header.version}`
        : `${base}'s changes from ${since} to ${feed.header.version}: ${counted(feed.header.organizations_changed, 'organization')} added or changed, ${counted(feed.header.organizations_removed, 'organization')} removed${feed.header.taxonomies_changed ? ', taxonomies and terms replaced' : ''}`;
    write(`note: applying ${what}.`);
    const source = spooledHsdsSource('hsds-api', base, async () => folder);
    const result = await importSources('import', { ...config, sources: [base] }, [source], write, writeResult);
    if (result.code === 0 && result.version !== undefined) {
      writeState(config.dataDir, { source: base, version: feed.header.version, published: result.version });
      write(`Synced with ${base} (version ${feed.header.version}) in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
    }
    return result.code;
  } finally {
    release();
    await stores?.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
