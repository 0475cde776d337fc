import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { TSchema } from 'typebox';
import { ParameterError } from './problem.ts';
import { RANKED_SEARCH_LIMIT } from '../store/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The declared query parameters, read (see readQuery); absent when not given or blank. */
    parameters: Record<string, unknown>;
  }
}

/**
 * Query parameters: how each is documented and how its raw text is read. Every value is read here,
 * strictly: a value that does not read is a 400 naming the parameter and saying what it accepts.
 * (Schema coercion would take `1e1` as 10, and could not say why `yes` is wrong.) The route schemas
 * only document; see app.ts.
 */
export interface QueryParameter<T = unknown> {
  /** Documents the parameter in OpenAPI; it validates the value `read` returns. */
  schema: TSchema;
  /** The value, or throws a reason (a phrase such as "must be true or false"). */
  read(raw: string): T;
}

class Unreadable extends Error {}

/** Length in code points, as JSON Schema's maxLength counts. */
const characters = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

export const fail = (reason: string): never => {
  throw new Unreadable(reason);
};

/**
 * A parameter schema's description, ending with its default and its examples, and the examples. The
 * OpenAPI document gives both for reading only: Swagger UI fills the inputs of "Try it out" with a
 * parameter's `default`, `example` or `examples`, and Execute then sends each as if the reader had
 * typed it. So the schemas state no `default`, and their `examples` stay the schema's (openapi.ts),
 * which Swagger UI does not take for values.
 */
export function documented(description: string, examples: readonly unknown[], defaultValue?: unknown): { description: string; examples?: unknown[] } {
  const shown = (values: readonly unknown[]) => values.map((value) => `\`${String(value)}\``).join(', ');
  const byDefault = defaultValue === undefined ? '' : ` Default: ${shown([defaultValue])}.`;
  if (examples.length === 0) return { description: `${description}${byDefault}` };
  return { description: `${description}${byDefault} ${examples.length === 1 ? 'Example' : 'Examples'}: ${shown(examples)}.`, examples: [...examples] };
}

export function integerParameter(minimum: number, maximum: number, defaultValue: number, description: string): QueryParameter<number> {
  const reason = `must be an integer from ${minimum} to ${maximum}`;
  return {
    schema: Type.Optional(Type.Integer({ minimum, maximum, ...documented(description, [Math.min(maximum, defaultValue + 1)], defaultValue) })),
    read(raw) {
      if (!/^[0-9]+$/.test(raw)) return fail(reason);
      const value = Number(raw);
      return Number.isSafeInteger(value) && value >= minimum && value <= maximum ? value : fail(reason);
    },
  };
}

const BOOLEANS: ReadonlyMap<string, boolean> = new Map([['true', true], ['false', false], ['1', true], ['0', false]]);

export function booleanParameter(description: string): QueryParameter<boolean> {
  return {
    schema: Type.Optional(Type.Boolean(documented(`${description} Accepts \`true\`, \`false\`, \`1\` or \`0\`.`, [true], false))),
    read: (raw) => BOOLEANS.get(raw) ?? fail('must be true, false, 1 or 0'),
  };
}

/** One of `choices`; `defaultValue` is what its absence means, when something else (a header) does not decide. */
export function choiceParameter<const Choice extends string>(choices: readonly Choice[], defaultValue: Choice | undefined, description: string): QueryParameter<Choice> {
  return {
    // A plain enum, not a union of literals: documentation tools list an enum's values (Swagger UI
    // showed the union as `string | (string | string)`, its select holding only the first).
    schema: Type.Optional(Type.Unsafe<Choice>({ type: 'string', enum: [...choices], ...documented(description, choices.filter((choice) => choice !== defaultValue), defaultValue) })),
    read: (raw) => (choices as readonly string[]).includes(raw) ? (raw as Choice) : fail(`must be one of ${choices.join(', ')}`),
  };
}

/** A free-text value (an id, a code), trimmed; blank means not given. */
export function textParameter(maxLength: number, description: string, examples: string[] = []): QueryParameter<string | undefined> {
  return {
    schema: Type.Optional(Type.String({ maxLength, ...documented(description, examples) })),
    read(raw) {
      const value = raw.trim();
      if (characters(value) > maxLength) return fail(`must be at most ${maxLength} characters`);
      return value === '' ? undefined : value;
    },
  };
}

export const MAX_SEARCH_LENGTH = 256;
export const MAX_SEARCH_WORDS = 32;
// A word starts with a letter or digit; combining marks belong to the word they follow.
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;

/**
 * Search text is split into words (runs of letters and digits); punctuation and quotes only separate
 * words, so no input is query syntax. Text without any word is no search at all.
 */
export const searchParameter = (searched: string, order = 'those whose code or name holds every word first, then the rest, each group in list order'): QueryParameter<string[] | undefined> => ({
  schema: Type.Optional(
    Type.String({
      maxLength: MAX_SEARCH_LENGTH,
      ...documented(
        `Full-text search over ${searched}: items having every word, ${order}, ranked up to the first ${RANKED_SEARCH_LIMIT} matches. Words are runs of letters and digits, matched without regard to case, accents or apostrophes and by stem (\`shelters\` finds \`shelter\`); \`&\` is \`and\`; filler words (the, of, and, inc, …) need not match; abbreviations and short forms (st, ymca, childcare, …) meet their long forms. Other punctuation is ignored. At most ${MAX_SEARCH_LENGTH} characters and ${MAX_SEARCH_WORDS} words.`,
        ['food bank'],
      ),
    }),
  ),
  read(raw) {
    if (characters(raw) > MAX_SEARCH_LENGTH) return fail(`must be at most ${MAX_SEARCH_LENGTH} characters`);
    const words = raw.match(WORD) ?? [];
    if (words.length > MAX_SEARCH_WORDS) return fail(`must have at most ${MAX_SEARCH_WORDS} words`);
    // The text goes to the store whole: apostrophes, `&` and word order mean something there (search-text.ts).
    return words.length === 0 ? undefined : [raw];
  },
});

// An unescaped `+` in a query string arrives as a space, so a space before the offset reads as `+`.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+ -]\d{2}:\d{2})?)?$/;

/** The latest instant an ISO 8601 string of four-digit years can name; later ones are clamped to it. */
const LATEST = '9999-12-31T23:59:59.999Z';

/**
 * An ISO 8601 (RFC 3339) date or date-time as an instant: `2026-11-01` (midnight UTC),
 * `2026-11-01T09:30`, `2026-11-01T09:30:00Z`, `2026-11-01T09:30:00.5+01:00`. Without an offset, UTC.
 * Returned in the form `last_modified` is stored in (toISOString), so the two compare as strings.
 */
export function readInstant(raw: string): string | undefined {
  const match = DATE_TIME.exec(raw);
  if (match === null) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset = 'Z'] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  if (h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 0 to 99 as they are.
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, Math.floor(Number(`0${fraction || '.0'}`) * 1000));
  // A rolled-over date (February 30 read as March 2) is not a real one.
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  let millis = date.getTime();
  if (offset.toUpperCase() !== 'Z') {
    const [offsetHours, offsetMinutes] = offset.slice(1).split(':').map(Number) as [number, number];
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    millis -= (offset.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  const instant = new Date(millis);
  if (instant.getUTCFullYear() > 9999) return LATEST;
  return instant.getUTCFullYear() < 0 ? '0000-01-01T00:00:00.000Z' : instant.toISOString();
}

export const instantParameter = (description: string): QueryParameter<string> => ({
  schema: Type.Optional(Type.String(documented(description, ['2026-11-01', '2026-11-01T09:30:00Z']))),
  read: (raw) => readInstant(raw) ?? fail('must be an ISO 8601 date (2026-11-01) or date-time (2026-11-01T09:30:00Z)'),
});

export type QueryParameters = Record<string, QueryParameter>;

/** A parameter HSDS does not define for the operation: marked so in the OpenAPI document. */
export function profileExtension<T>(parameter: QueryParameter<T>): QueryParameter<T> {
  // Every property, TypeBox's hidden ones included (they say the parameter is optional).
  const schema = Object.defineProperties({}, Object.getOwnPropertyDescriptors(parameter.schema)) as TSchema;
  return { ...parameter, schema: Object.assign(schema, { 'x-profile-extension': true }) };
}

/** The querystring schema of a route taking these parameters. */
export const querySchema = (parameters: QueryParameters) =>
  Type.Object(Object.fromEntries(Object.entries(parameters).map(([name, parameter]) => [name, parameter.schema])));

/** A preValidation hook that reads every declared parameter into `request.parameters`. */
export function readQuery(parameters: QueryParameters) {
  return async (request: FastifyRequest): Promise<void> => {
    const query = request.query as Record<string, unknown>;
    request.parameters = {};
    for (const [name, parameter] of Object.entries(parameters)) {
      const raw = query[name];
      if (raw === undefined) continue;
      if (typeof raw !== 'string') throw new ParameterError(name, 'must be given once');
      try {
        const value = parameter.read(raw);
        if (value !== undefined) request.parameters[name] = value;
      } catch (error) {
        if (error instanceof Unreadable) throw new ParameterError(name, error.message);
        throw error;
      }
    }
  };
}
