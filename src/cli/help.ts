/** Help text laid out for a terminal of HELP_WIDTH columns, wrapped at word boundaries. */

export const HELP_WIDTH = 100;
const INDENT = '  ';
const GAP = '  ';
/** A term (flag) wider than this takes a line of its own rather than widen the column for every row. */
const MAX_TERM_WIDTH = 32;

/** One entry of a two-column list: its term (a flag, then its environment variable) and what it does. */
export interface HelpRow {
  term: string[];
  description: string;
}

/** The words of `text` in lines of at most `width` characters (a longer word has a line of its own). */
export function wrap(text: string, width = HELP_WIDTH): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((each) => each !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * Terms on the left, descriptions wrapped on the right with a hanging indent. A term line wider than
 * the column stands alone, and its row's description continues on the lines below it.
 */
export function twoColumns(rows: readonly HelpRow[]): string {
  const termWidth = Math.max(0, ...rows.flatMap((row) => row.term.map((term) => term.length)).filter((length) => length <= MAX_TERM_WIDTH));
  const descriptionWidth = HELP_WIDTH - INDENT.length - termWidth - GAP.length;
  const lines: string[] = [];
  for (const row of rows) {
    const description = wrap(row.description, descriptionWidth);
    for (const term of row.term) {
      lines.push(term.length > termWidth ? `${INDENT}${term}` : `${INDENT}${term.padEnd(termWidth)}${GAP}${description.shift() ?? ''}`.trimEnd());
    }
    for (const rest of description) lines.push(`${INDENT}${''.padEnd(termWidth)}${GAP}${rest}`);
  }
  return lines.join('\n');
}
