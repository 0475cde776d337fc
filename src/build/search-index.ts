import { rmSync } from 'node:fs';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { indexedTokens, indexedWords, searchLine, textWords } from '../store/search-text.ts';
import { buildFilePragmas, CREATE_SEARCH_TEXT_TABLES, FILL_WORD_COUNTS, organizationIndexStored, optimizeTextIndex } from '../store/sqlite/schema.ts';
import { SEARCHED_LISTS } from '../store/tables.ts';
import type { SearchedList } from '../store/tables.ts';

/**
 * Writes each item's searchable words into its list's text index (and, when kept, its search text
 * table). Organizations go into their index by search rank (fewest name words first, then list
 * position), so that the matches of a search too broad to rank read shortest names first; their
 * names' tokens are kept for ranking (organization_search) and their words for correcting and
 * completing searches (search_vocabulary).
 *
 * Organizations are staged as they are written, and their ranked index built once all are in: here,
 * or, given `indexFile`, from a file of its own on a worker thread, while this one writes the rest
 * of the snapshot, and then copied in. Either way the snapshot's tables are the same, row for row.
 */
/** Sets of terms whose part of `names` is kept (organizations share a few sets of terms; memory stays bounded). */
const TOPIC_LINES_KEPT = 10_000;

/** The page cache of an organization index built apart: small, since its worker's memory adds to the import's peak. */
export const INDEX_CACHE_KIB = 2048;

export class SearchIndexWriter {
  private readonly db: DatabaseSync;
  private readonly inserts: Map<Exclude<SearchedList, 'organizations'>, StatementSync[]>;
  private readonly stageOrganization: StatementSync;
  /** Per name word: its token and how many organizations hold it. */
  private readonly vocabulary = new Map<string, { token: string; organizations: number }>();
  private readonly tokensOfTopic = new Map<number, readonly string[]>();
  private readonly topicLines = new Map<string, string>();
  private readonly keepSearchText: boolean;
  private readonly indexFile: string | undefined;

  /** Outside a transaction when given `indexFile`, which is attached. */
  constructor(db: DatabaseSync, keepSearchText: boolean, indexFile?: string) {
    this.db = db;
    this.keepSearchText = keepSearchText;
    this.indexFile = indexFile;
    if (keepSearchText) db.exec(CREATE_SEARCH_TEXT_TABLES);
    this.inserts = new Map(
      SEARCHED_LISTS.filter((list) => list !== 'organizations').map((list) => [
        list,
        [
          db.prepare(`INSERT INTO ${list}_text (rowid, title, body) VALUES (?, ?, ?)`),
          ...(keepSearchText ? [db.prepare(`INSERT INTO ${list}_search_text (position, title, body) VALUES (?, ?, ?)`)] : []),
        ],
      ]),
    );
    let input = 'temp.organization_search_input';
    if (indexFile !== undefined) {
      rmSync(indexFile, { force: true });
      db.prepare('ATTACH DATABASE ? AS organization_index').run(indexFile);
      db.exec(buildFilePragmas('organization_index', INDEX_CACHE_KIB));
      input = 'organization_index.organization_search_input';
    }
    db.exec(`CREATE TABLE ${input} (position INTEGER PRIMARY KEY, length INTEGER NOT NULL, names TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL)`);
    this.stageOrganization = db.prepare(`INSERT INTO ${input} (position, length, names, title, body) VALUES (?, ?, ?, ?, ?)`);
  }

  /** A taxonomy or term. `title`: the texts that rank an item first when they hold every word searched for. */
  write(list: Exclude<SearchedList, 'organizations'>, position: number, title: readonly (string | null | undefined)[], body: string | null | undefined): void {
    const titleLine = searchLine(...title);
    const bodyLine = searchLine(body);
    for (const insert of this.inserts.get(list)!) insert.run(position, titleLine, bodyLine);
  }

  /**
   * `descriptionLine`: its description's words as searchLine makes them. `topics`: the terms it is
   * classified under (their names and positions), which rank it first among names alike.
   */
  writeOrganization(
    position: number,
    name: string,
    alternateName: string | undefined,
    descriptionLine: string,
    topics: readonly { name: string; position: number }[],
  ): void {
    const nameWords = textWords(name);
    const alternateWords = textWords(alternateName);
    const seen = new Set<string>();
    for (const words of [nameWords, alternateWords]) {
      for (const { word, token } of words) {
        if (seen.has(word)) continue;
        seen.add(word);
        const entry = this.vocabulary.get(word);
        if (entry === undefined) this.vocabulary.set(word, { token, organizations: 1 });
        else entry.organizations++;
      }
    }
    const names = `${nameWords.map((word) => word.word).join(' ')}\t${alternateWords.map((word) => word.word).join(' ')}\t${this.topicLine(topics)}`;
    const title = (alternateWords.length === 0 ? indexedTokens(nameWords) : [...indexedTokens(nameWords), ...indexedTokens(alternateWords)]).join(' ');
    this.stageOrganization.run(position, nameWords.length, names, title, descriptionLine);
  }

  /** The terms' part of an organization's `names`: their tokens, then their positions; made once per set of terms. */
  private topicLine(topics: readonly { name: string; position: number }[]): string {
    let key = '';
    for (const topic of topics) key += `${topic.position} `;
    let line = this.topicLines.get(key);
    if (line === undefined) {
      const tokens = new Set(topics.flatMap((topic) => this.topicTokens(topic)));
      line = `${[...tokens].join(' ')}\t${[...new Set(topics.map((topic) => topic.position))].join(' ')}`;
      if (this.topicLines.size < TOPIC_LINES_KEPT) this.topicLines.set(key, line);
    }
    return line;
  }

  /** The tokens of a term's name, made once per term: many organizations share each term. */
  private topicTokens(topic: { name: string; position: number }): readonly string[] {
    let tokens = this.tokensOfTopic.get(topic.position);
    if (tokens === undefined) this.tokensOfTopic.set(topic.position, (tokens = indexedWords(topic.name)));
    return tokens;
  }

  /**
   * After the last organization, outside a transaction: the vocabulary, and the ranked index built
   * here, or started on a worker thread (copyOrganizationIndex takes it in once it is built).
   */
  finishOrganizations(): Promise<void> {
    this.db.exec('BEGIN');
    const insertWord = this.db.prepare('INSERT INTO search_vocabulary (word, token, organizations) VALUES (?, ?, ?)');
    for (const [word, { token, organizations }] of this.vocabulary) insertWord.run(word, token, organizations);
    this.vocabulary.clear();
    if (this.indexFile === undefined) buildOrganizationIndex(this.db, this.keepSearchText);
    this.db.exec('COMMIT');
    if (this.indexFile === undefined) return Promise.resolve();
    this.db.exec('DETACH DATABASE organization_index');
    return buildApart(this.indexFile, this.keepSearchText);
  }

  /** After finishOrganizations, outside a transaction: copies an index built apart into the snapshot, and removes its file. */
  copyOrganizationIndex(): void {
    if (this.indexFile === undefined) return;
    this.db.prepare('ATTACH DATABASE ? AS organization_index').run(this.indexFile);
    try {
      this.db.exec('BEGIN');
      // The text index's own tables too, as they are: the rows its statements would have written here.
      for (const table of organizationIndexStored(this.keepSearchText)) {
        this.db.exec(`DELETE FROM main.${table}; INSERT INTO main.${table} SELECT * FROM organization_index.${table};`);
      }
      this.db.exec('COMMIT');
    } finally {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      this.db.exec('DETACH DATABASE organization_index');
      rmSync(this.indexFile, { force: true });
    }
  }

  /** Taxonomies and terms, after the last: each text index merged into one segment. */
  finish(): void {
    for (const list of this.inserts.keys()) this.db.exec(optimizeTextIndex(list));
  }
}

/**
 * Fills the ranked index of `db` (its organization_search, text index, search text when kept, and
 * word counts) from the organizations staged in organization_search_input, which it drops.
 */
export function buildOrganizationIndex(db: DatabaseSync, keepSearchText: boolean): void {
  db.exec(`
    INSERT INTO organization_search (rank, position, names)
      SELECT row_number() OVER (ORDER BY length, position), position, names FROM organization_search_input ORDER BY length, position;
  `);
  // One statement each: the text index is filled in rank order without a call per row.
  const inRankOrder = 'SELECT s.rank, i.title, i.body FROM organization_search s JOIN organization_search_input i ON i.position = s.position ORDER BY s.rank';
  db.exec(`INSERT INTO organizations_text (rowid, title, body) ${inRankOrder}`);
  if (keepSearchText) db.exec(`INSERT INTO organizations_search_text (position, title, body) ${inRankOrder}`);
  db.exec('DROP TABLE organization_search_input');
  db.exec(optimizeTextIndex('organizations'));
  db.exec(FILL_WORD_COUNTS);
}

function buildApart(indexFile: string, keepSearchText: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./search-index-worker.ts', import.meta.url), { workerData: { indexFile, keepSearchText }, resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 16 } });
    worker.once('message', (reply: { error?: string }) => (reply.error === undefined ? resolve() : reject(new Error(`building the search index failed: ${reply.error}`))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the search index worker stopped (exit code ${code})`)));
  });
}
