import { hasControlCharacters } from './diagnostics.ts';
import type { Diagnostics } from './diagnostics.ts';
import type { SourceRow } from './csv.ts';

/** Longest accepted value per kind of field, in characters (documented in docs/data-format.md). */
export const FIELD_LIMITS = {
  id: 255,
  code: 100,
  /** An organization identifier, its scheme, a tax id. */
  identifier: 200,
  name: 500,
  text: 200,
  description: 20_000,
  email: 254,
  url: 2_048,
} as const;

export type FieldKind = keyof typeof FIELD_LIMITS;

/** Kinds of field that name something: they must be printable text, with no control character. */
const NAMING_KINDS: ReadonlySet<FieldKind> = new Set(['id', 'code', 'identifier']);

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Text in one Unicode form (NFC), so canonically equivalent spellings ("é" as one character or as "e"
 * and a combining accent) are one value: one id, one name in sorting and search. ASCII is already NFC
 * and is not normalised again (that would cost more than the rest of reading it).
 */
const toNfc = (text: string): string => (NON_ASCII.test(text) ? text.normalize('NFC') : text);

// The shape validators check for `format: email` (a local part, @, a dotted domain), without spaces.
const EMAIL = /^[^\s@"(),:;<>[\\\]]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i;

/** A host name with a dot and a top-level domain of letters, then optionally a port and a path. */
const HOST_FIRST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}(?::\d{1,5})?(?:[/?#]\S*)?$/i;

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** How much of a dropped value its warning quotes. */
const QUOTED_LENGTH = 80;

/**
 * Reads the fields of one source row, reporting each problem at its file, line and field.
 * `valid` turns false on any error, so the caller can skip the row (reading goes on).
 */
export class RowFields {
  valid = true;
  private readonly row: SourceRow;
  private readonly file: string;
  private readonly diagnostics: Diagnostics;

  constructor(file: string, row: SourceRow, diagnostics: Diagnostics) {
    this.file = file;
    this.row = row;
    this.diagnostics = diagnostics;
  }

  get line(): number {
    return this.row.line;
  }

  /** True when the file has this column. */
  has(column: string): boolean {
    return column in this.row.fields;
  }

  at(field?: string) {
    const path = this.row.path;
    if (path !== undefined) return { file: this.file, field: field === undefined ? path : `${path}.${field}` };
    return { file: this.file, line: this.row.line, field };
  }

  error(field: string | undefined, message: string): void {
    this.valid = false;
    this.diagnostics.error(this.at(field), message);
  }

  warning(kind: string, field: string | undefined, message: string): void {
    this.diagnostics.warning(kind, this.at(field), message);
  }

  /**
   * The trimmed value in NFC (undefined when empty), and what breaks its kind's rule if anything does:
   * a length over the limit, or a control character in a field that names something.
   */
  private read(column: string, kind: FieldKind): { value?: string; flaw?: 'too long' | 'control character' } {
    const trimmed = this.row.fields[column]?.trim();
    if (trimmed === undefined || trimmed === '') return {};
    const value = toNfc(trimmed);
    if (value.length > FIELD_LIMITS[kind]) return { value, flaw: 'too long' };
    if (NAMING_KINDS.has(kind) && hasControlCharacters(value)) return { value, flaw: 'control character' };
    return { value };
  }

  /**
   * An optional value that describes the record (a description, an email, a tax id...): undefined when
   * empty. A value that breaks its field's rule is dropped with a warning and the record is kept,
   * whatever the rule: one flawed detail must not keep the rest of an export from being published.
   */
  optional(column: string, kind: FieldKind): string | undefined {
    const { value, flaw } = this.read(column, kind);
    if (value === undefined || flaw === undefined) return value;
    const why = flaw === 'too long' ? `is ${value.length} characters long; the limit is ${FIELD_LIMITS[kind]}` : 'holds a control character (shown escaped)';
    return this.drop(column, value, why);
  }

  /**
   * An optional id, code or reference, which says which record this is or which it links to: a
   * value that breaks its rule is an error, since it cannot be dropped without changing what links where.
   */
  optionalId(column: string, kind: FieldKind): string | undefined {
    const { value, flaw } = this.read(column, kind);
    if (value === undefined || flaw === undefined) return value;
    if (flaw === 'too long') this.error(column, `is ${value.length} characters long; the limit is ${FIELD_LIMITS[kind]}`);
    else this.error(column, `"${value}" holds a control character (shown escaped); an id or code must be printable text`);
    return undefined;
  }

  /** Like optionalId, and an error when empty. Returns '' on error so records stay well-typed. */
  required(column: string, kind: FieldKind): string {
    const value = this.optionalId(column, kind);
    if (value === undefined) {
      if ((this.row.fields[column]?.trim() ?? '') === '') this.error(column, 'is required and empty');
      return '';
    }
    return value;
  }

  /** The one warning for an optional value that breaks its field's rule, naming the value; nothing is served in its place. */
  private drop(column: string, value: string, why: string): undefined {
    const shown = value.length > QUOTED_LENGTH ? `${value.slice(0, QUOTED_LENGTH)}…` : value;
    this.warning(`invalid ${column} dropped`, column, `"${shown}" ${why}; dropped`);
    return undefined;
  }

  /** An email address. */
  email(column: string): string | undefined {
    const value = this.optional(column, 'email');
    if (value === undefined || EMAIL.test(value)) return value;
    return this.drop(column, value, 'is not an email address');
  }

  /** An absolute http(s) URL. */
  url(column: string): string | undefined {
    const value = this.optional(column, 'url');
    if (value === undefined) return undefined;
    if (URL.canParse(value) && /^https?:\/\/[^\s]+$/i.test(value) && new URL(value).hostname !== '') return value;
    return this.drop(column, value, 'is not an absolute http(s) URL');
  }

  /**
   * A website: an absolute http(s) URL, or a host name written without a scheme (`www.example.org`,
   * `example.org/about`, as HSDS 1.x data often has it), which is served with `http://` in front and
   * counted in a warning. Anything else is dropped.
   */
  website(column: string): string | undefined {
    const value = this.optional(column, 'url');
    if (value === undefined) return undefined;
    if (!HOST_FIRST.test(value) || !URL.canParse(`http://${value}`)) return this.url(column);
    this.warning('website without http(s)://, served with http://', column, `"${value}" was served as "http://${value}"`);
    return `http://${value}`;
  }

  /** An instant, RFC 3339 (`2026-01-31T12:00:00Z`, an offset or fractions of a second allowed): in UTC to the millisecond, as served. */
  instant(column: string): string | undefined {
    const value = this.optional(column, 'text');
    if (value === undefined) return undefined;
    if (RFC_3339.test(value) && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
    return this.drop(column, value, 'is not a date and time (RFC 3339, e.g. 2026-01-31T12:00:00Z)');
  }

  /** A year of four digits. */
  year(column: string): number | undefined {
    const value = this.optional(column, 'text');
    if (value === undefined) return undefined;
    if (/^\d{4}$/.test(value)) return Number(value);
    return this.drop(column, value, 'is not a four-digit year');
  }

  /** One of a fixed set of values, compared trimmed and ignoring case; a warning when it is not written exactly so. */
  oneOf<T extends string>(column: string, values: readonly T[]): T | undefined {
    const given = this.row.fields[column] ?? '';
    const trimmed = given.trim();
    if (trimmed.length > FIELD_LIMITS.text) {
      this.error(column, `must be one of ${values.join(', ')}`);
      return undefined;
    }
    const value = trimmed.toLowerCase();
    const match = values.find((candidate) => candidate === value);
    if (match === undefined) this.error(column, `must be one of ${values.join(', ')}, got "${trimmed}"`);
    else if (given !== match) this.warning('value read ignoring case and spaces', column, `"${given}" was read as "${match}"`);
    return match;
  }
}
