import type { SourceLocation } from '../../hsds/records.ts';

/**
 * Errors and warnings found while reading and checking sources, each located by file, line and field.
 * Errors are collected (up to a limit) so a publisher sees many problems per run, not one at a time;
 * warnings are counted per kind and summarised at the end.
 */

export interface Diagnostic extends SourceLocation {
  message: string;
}

export interface WarningSummary {
  kind: string;
  count: number;
  /** The first few occurrences, as examples. */
  examples: Diagnostic[];
}

/** Thrown to stop reading once the error limit is reached. */
export class TooManyErrors extends Error {
  constructor(limit: number) {
    super(`stopped after ${limit} errors`);
  }
}

export interface DiagnosticsOptions {
  /** Stop after this many errors (default 50). */
  maxErrors?: number;
  /** Treat every warning as an error. */
  strict?: boolean;
}

const EXAMPLES_PER_WARNING = 3;

/**
 * Characters that act on a terminal or change how a line reads, rather than print: C0 and C1 controls
 * (ESC, CSI, BEL, CR, NUL...), DEL, the Unicode bidirectional controls, and the line and paragraph separators.
 */
const CONTROL_CHARACTERS = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;

export const hasControlCharacters = (text: string): boolean => text.search(CONTROL_CHARACTERS) !== -1;

/**
 * Shows each control character as an escape (`\x1b`, `\u202e`), so that a message quoting input can
 * neither send a terminal sequence nor break its line.
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => {
    const code = character.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

export function formatLocation(at: SourceLocation): string {
  return `${at.file}${at.line === undefined ? '' : `:${at.line}`}${at.field === undefined ? '' : ` [${at.field}]`}`;
}

export function formatDiagnostic(diagnostic: Diagnostic): string {
  return `${formatLocation(diagnostic)}: ${diagnostic.message}`;
}

function count(summaries: Map<string, WarningSummary>, kind: string, example: Diagnostic): void {
  let summary = summaries.get(kind);
  if (summary === undefined) {
    summary = { kind, count: 0, examples: [] };
    summaries.set(kind, summary);
  }
  summary.count++;
  if (summary.examples.length < EXAMPLES_PER_WARNING) summary.examples.push(example);
}

export class Diagnostics {
  readonly maxErrors: number;
  readonly strict: boolean;
  readonly errors: Diagnostic[] = [];
  private readonly warningsByKind = new Map<string, WarningSummary>();
  private readonly notesByKind = new Map<string, WarningSummary>();

  constructor(options: DiagnosticsOptions = {}) {
    this.maxErrors = options.maxErrors ?? 50;
    this.strict = options.strict ?? false;
    if (!Number.isInteger(this.maxErrors) || this.maxErrors < 1) throw new RangeError('maxErrors must be a positive integer');
  }

  /** Records an error; throws TooManyErrors when the limit is reached. */
  error(at: SourceLocation, message: string): void {
    this.errors.push({ ...at, message });
    if (this.errors.length >= this.maxErrors) throw new TooManyErrors(this.maxErrors);
  }

  /** Records a warning of a kind (e.g. "unknown NTEE code"); in strict mode it is an error. */
  warning(kind: string, at: SourceLocation, message: string): void {
    if (this.strict) {
      this.error(at, `${message} (a warning, fatal with --strict)`);
      return;
    }
    count(this.warningsByKind, kind, { ...at, message });
  }

  /**
   * Records a reference to something that is not in the input: a warning of `warningKind` where the
   * format lets references dangle, else an error. When errors were found already, it is only counted
   * (see uncheckedReferences): a file or column that failed leaves every reference into it dangling,
   * and one cause deserves one message.
   */
  danglingReference(at: SourceLocation, message: string, warningKind?: string): void {
    if (this.hasErrors) this.uncheckedReferences++;
    else if (warningKind === undefined) this.error(at, message);
    else this.warning(warningKind, at, message);
  }

  /** References to records not in the input that were counted, not listed, because errors had been found before them. */
  uncheckedReferences = 0;

  /**
   * Records something the import did on purpose, by a documented rule, that is no problem with the
   * input (e.g. a value left out because it names a person): counted per kind for the summary, never
   * an error, even with --strict.
   */
  note(kind: string, at: SourceLocation, message: string): void {
    count(this.notesByKind, kind, { ...at, message });
  }

  get hasErrors(): boolean {
    return this.errors.length > 0;
  }

  get warnings(): WarningSummary[] {
    return [...this.warningsByKind.values()];
  }

  get notes(): WarningSummary[] {
    return [...this.notesByKind.values()];
  }

  get warningCount(): number {
    let total = 0;
    for (const summary of this.warningsByKind.values()) total += summary.count;
    return total;
  }
}
