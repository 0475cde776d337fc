#!/usr/bin/env node
// Keeps a copy of an hsds-org-api feed in a SQLite file, up to date: the first run copies
// everything, each later run applies the changes since the version the copy holds. Plain Node.js
// (22.13 or later, for node:sqlite), no dependencies. See docs/consuming.md.
//
//   node examples/mirror.mjs http://localhost:8080/api/hsds/v3 mirror.sqlite
//
// The copy has one table per kind (organizations, taxonomies, taxonomy_terms), each row an id and
// the JSON document as served, and `mirror` holding the version. A feed is applied in one
// transaction and only when it arrived whole (its `end` line), so the copy is always one version.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';

const sqlite = await import('node:sqlite').catch(() => undefined);
if (sqlite === undefined) {
  console.error(`mirror.mjs needs Node.js 22.13 or later, for node:sqlite; this is ${process.version}`);
  process.exit(2);
}
const { DatabaseSync } = sqlite;

const [apiRoot, file] = process.argv.slice(2);
if (apiRoot === undefined || file === undefined) {
  console.error('usage: node mirror.mjs <API root, e.g. http://localhost:8080/api/hsds/v3> <mirror.sqlite>');
  process.exit(2);
}

const db = new DatabaseSync(file);
db.exec(`
  CREATE TABLE IF NOT EXISTS mirror (version TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS organizations (id TEXT PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS taxonomies (id TEXT PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS taxonomy_terms (id TEXT PRIMARY KEY, json TEXT NOT NULL);
`);
const held = db.prepare('SELECT version FROM mirror').get()?.version;

/** The feed since version `since` (`0`: everything); undefined when the server no longer keeps that version. */
async function feed(since) {
  const url = `${apiRoot.replace(/\/+$/, '')}/changes?since=${since}`;
  const response = await fetch(url, { headers: { accept: 'application/x-ndjson' } });
  if (response.status === 410) {
    console.error(`${since} is too old for this server (${(await response.json()).detail}); copying everything`);
    return undefined;
  }
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return createInterface({ input: Readable.fromWeb(response.body), crlfDelay: Infinity });
}

const upsert = (table) => db.prepare(`INSERT INTO ${table} (id, json) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET json = excluded.json`);
const write = {
  organization: upsert('organizations'),
  taxonomy: upsert('taxonomies'),
  taxonomy_term: upsert('taxonomy_terms'),
};
const removeOrganization = db.prepare('DELETE FROM organizations WHERE id = ?');

/** Applies one feed in a transaction: all of it, or (cut short, or anything unexpected) none of it. */
async function apply(lines) {
  const counts = { organization: 0, removed_organization: 0, taxonomy: 0, taxonomy_term: 0 };
  let summary;
  db.exec('BEGIN');
  try {
    for await (const text of lines) {
      if (text === '') continue;
      const line = JSON.parse(text);
      const object = line[line.type];
      if (line.type === 'changes') {
        summary = object;
        // From nothing, the feed holds every organization; changed taxonomies come whole.
        if (object.since === null) db.exec('DELETE FROM organizations');
        if (object.taxonomies_changed) db.exec('DELETE FROM taxonomies; DELETE FROM taxonomy_terms');
      } else if (line.type === 'removed_organization') {
        removeOrganization.run(object.id);
      } else if (line.type === 'end') {
        if (summary === undefined || object.version !== summary.version) throw new Error('the feed ended without its changes line');
        db.exec('DELETE FROM mirror');
        db.prepare('INSERT INTO mirror (version) VALUES (?)').run(object.version);
        db.exec('COMMIT');
        return { ...summary, counts };
      } else if (write[line.type] !== undefined) {
        write[line.type].run(object.id, JSON.stringify(object));
      } else {
        continue; // a kind of line this script does not know: not ours to keep
      }
      counts[line.type]++;
    }
    throw new Error('the feed was cut short (no end line); nothing applied');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

let lines = await feed(held ?? '0');
lines ??= await feed('0');
const result = await apply(lines);
const counted = (count, one, many) => `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
const from = result.since === null ? 'everything' : `the changes since ${result.since.version}`;
const taxonomies = result.taxonomies_changed
  ? `${counted(result.counts.taxonomy, 'taxonomy', 'taxonomies')} and ${counted(result.counts.taxonomy_term, 'term', 'terms')} replaced`
  : 'taxonomies unchanged';
console.log(
  `applied ${from}: ${counted(result.counts.organization, 'organization', 'organizations')} added or changed, ` +
    `${result.counts.removed_organization.toLocaleString('en-US')} removed, ${taxonomies}; now at version ${result.version}`,
);
db.close();
