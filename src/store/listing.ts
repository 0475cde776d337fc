/**
 * A filtered, ordered list of one table's rows as SQL parts, the same on every backend. Rows are
 * named by position; the rendered JSON is joined in by position for the rows wanted only, so sorting
 * and skipping never carry the large JSON columns along. `Param` is the backend's parameter type.
 */
export interface Listing<Param = unknown> {
  /** Where the JSON of a position is: a table and a column. */
  jsonTable: string;
  jsonColumn: 'json' | 'detail_json';
  /** For full organizations: where the details of a position are (see packed-documents.ts). */
  detailsTable?: string;
  from: string;
  where: string[];
  params: Param[];
  /** The list order: one integer expression, unique per row and following positions, needing no sort. */
  order: string;
  /** For a search: the relevance order (ahead of `order`), applied when the matches are few enough. */
  ranking?: string;
  /** Parameters of `ranking`, if it has any. */
  rankingParams?: Param[];
  /** The expression giving a row's position in the JSON table. */
  position: string;
  /** A query of the list's length that is cheaper than counting its rows, if there is one. */
  length?: { sql: string; params: Param[] };
  /** For an organization search: the expressions of a match's search rank and name tokens, ranked by search-ranking.ts. */
  candidates?: { rank: string; names: string };
}

/** A search condition and its ranking, in a backend's SQL (see textSearch in each backend). */
export interface TextSearch<Param> {
  where: string;
  param: Param;
  ranking: string;
  rankingParams: Param[];
}

/**
 * The listing of a search: rows of `from` matching `text` and the other conditions, ranked, in the
 * order of `position` (the list order of a searched table is its positions).
 */
export const searchListing = <Param>(
  json: Pick<Listing<Param>, 'jsonTable' | 'jsonColumn' | 'detailsTable'>,
  from: string,
  position: string,
  text: TextSearch<Param>,
  conditions: { where: string[]; params: Param[] } = { where: [], params: [] },
): Listing<Param> => ({
  ...json,
  from,
  where: [text.where, ...conditions.where],
  params: [text.param, ...conditions.params],
  order: position,
  ranking: text.ranking,
  rankingParams: text.rankingParams,
  position,
});
