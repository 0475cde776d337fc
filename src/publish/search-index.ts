import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { indexedTokens, indexedWords, searchLine, textWords } from '../store/search-text.ts';
import { CREATE_SEARCH_TEXT_TABLES, SEARCHED_LISTS } from '../store/sqlite-schema.ts';
import type { SearchedList } from '../store/sqlite-schema.ts';

/**
 * Writes each item's searchable words into its list's text index (and, when kept, its search text
 * table). Organizations go into their index by search rank (fewest name words first, then list
 * position), so that the matches of a search too broad to rank read shortest names first; their
 * names' tokens are kept for ranking (organization_search) and their words for correcting and
 * completing searches (search_vocabulary).
 */
export class SearchIndexWriter {
  private readonly db: DatabaseSync;
  private readonly inserts: Map<Exclude<SearchedList, 'organizations'>, StatementSync[]>;
  private readonly stageOrganization: StatementSync;
  /** Per name word: its token and how many organizations hold it. */
  private readonly vocabulary = new Map<string, { token: string; organizations: number }>();
  private readonly tokensOfTopic = new Map<number, readonly string[]>();
  private readonly keepSearchText: boolean;

  constructor(db: DatabaseSync, keepSearchText: boolean) {
    this.db = db;
    this.keepSearchText = keepSearchText;
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
    db.exec('CREATE TEMP TABLE organization_search_input (position INTEGER PRIMARY KEY, length INTEGER NOT NULL, names TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL)');
    this.stageOrganization = db.prepare('INSERT INTO temp.organization_search_input (position, length, names, title, body) VALUES (?, ?, ?, ?, ?)');
  }

  /** A taxonomy or term. `title`: the texts that rank an item first when they hold every word searched for. */
  write(list: Exclude<SearchedList, 'organizations'>, position: number, title: readonly (string | null | undefined)[], body: string | null | undefined): void {
    const titleLine = searchLine(...title);
    const bodyLine = searchLine(body);
    for (const insert of this.inserts.get(list)!) insert.run(position, titleLine, bodyLine);
  }

  /**
   * `topics`: the terms it is classified under (their names and positions), which rank it first among
   * names alike.
   */
  writeOrganization(
    position: number,
    name: string,
    alternateName: string | undefined,
    description: string | undefined,
    topics: readonly { name: string; position: number }[],
  ): void {
    const nameWords = textWords(name);
    const alternateWords = textWords(alternateName);
    const seen = new Set<string>();
    for (const { word, token } of [...nameWords, ...alternateWords]) {
      if (seen.has(word)) continue;
      seen.add(word);
      const entry = this.vocabulary.get(word);
      if (entry === undefined) this.vocabulary.set(word, { token, organizations: 1 });
      else entry.organizations++;
    }
    const topicTokens = new Set(topics.flatMap((topic) => this.topicTokens(topic)));
    const names = [
      nameWords.map((word) => word.word).join(' '),
      alternateWords.map((word) => word.word).join(' '),
      [...topicTokens].join(' '),
      [...new Set(topics.map((topic) => topic.position))].join(' '),
    ].join('\t');
    const title = [...indexedTokens(nameWords), ...indexedTokens(alternateWords)].join(' ');
    this.stageOrganization.run(position, nameWords.length, names, title, searchLine(description));
  }

  /** The tokens of a term's name, made once per term: many organizations share each term. */
  private topicTokens(topic: { name: string; position: number }): readonly string[] {
    let tokens = this.tokensOfTopic.get(topic.position);
    if (tokens === undefined) this.tokensOfTopic.set(topic.position, (tokens = indexedWords(topic.name)));
    return tokens;
  }

  /** After the last organization: fills the organization index in rank order, and the vocabulary. */
  finishOrganizations(): void {
    this.db.exec(`
      INSERT INTO organization_search (rank, position, names)
        SELECT row_number() OVER (ORDER BY length, position), position, names FROM temp.organization_search_input ORDER BY length, position;
    `);
    // One statement each: the text index is filled in rank order without a call per row.
    const inRankOrder = 'SELECT s.rank, i.title, i.body FROM organization_search s JOIN temp.organization_search_input i ON i.position = s.position ORDER BY s.rank';
    this.db.exec(`INSERT INTO organizations_text (rowid, title, body) ${inRankOrder}`);
    if (this.keepSearchText) this.db.exec(`INSERT INTO organizations_search_text (position, title, body) ${inRankOrder}`);
    this.db.exec('DROP TABLE temp.organization_search_input');
    const insertWord = this.db.prepare('INSERT INTO search_vocabulary (word, token, organizations) VALUES (?, ?, ?)');
    for (const [word, { token, organizations }] of this.vocabulary) insertWord.run(word, token, organizations);
    this.vocabulary.clear();
  }
}
