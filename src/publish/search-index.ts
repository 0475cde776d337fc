import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { searchLine } from '../store/search-text.ts';
import { CREATE_SEARCH_TEXT_TABLES, SEARCHED_LISTS } from '../store/sqlite-schema.ts';
import type { SearchedList } from '../store/sqlite-schema.ts';

/** Writes each item's searchable words into its list's text index (and, when kept, its search text table). */
export class SearchIndexWriter {
  private readonly inserts: Map<SearchedList, StatementSync[]>;

  constructor(db: DatabaseSync, keepSearchText: boolean) {
    if (keepSearchText) db.exec(CREATE_SEARCH_TEXT_TABLES);
    this.inserts = new Map(
      SEARCHED_LISTS.map((list) => [
        list,
        [
          db.prepare(`INSERT INTO ${list}_text (rowid, title, body) VALUES (?, ?, ?)`),
          ...(keepSearchText ? [db.prepare(`INSERT INTO ${list}_search_text (position, title, body) VALUES (?, ?, ?)`)] : []),
        ],
      ]),
    );
  }

  /** `title`: the texts that rank an item first when they hold every word searched for. */
  write(list: SearchedList, position: number, title: readonly (string | null | undefined)[], body: string | null | undefined): void {
    const titleLine = searchLine(...title);
    const bodyLine = searchLine(body);
    for (const insert of this.inserts.get(list)!) insert.run(position, titleLine, bodyLine);
  }
}
