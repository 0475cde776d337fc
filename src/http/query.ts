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

const fail = (reason: string): never => {
  throw new Unreadable(reason);
};

export function integerParameter(minimum: number, maximum: number, defaultValue: number, description: string): QueryParameter<number> {
  const reason = `must be an integer from ${minimum} to ${maximum}`;
  return {
    schema: Type.Optional(Type.Integer({ minimum, maximum, default: defaultValue, description, examples: [Math.min(maximum, defaultValue + 1)] })),
    read(raw) {
      if (!/^[0-9]+$/.test(raw)) return fail(reason);
      const value = Number(raw);
      return Number.isSafeInteger(value) && value >= minimum && value <= maximum ? value : fail(reason);
    },
  };
}

const BOOLEANS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

export function booleanParameter(description: string): QueryParameter<boolean> {
  return {
    schema: Type.Optional(Type.Boolean({ default: false, description: `${description} Accepts \`true\`, \`false\`, \`1\` or \`0\`.`, examples: [true] })),
    read: (raw) => BOOLEANS[raw] ?? fail('must be true, false, 1 or 0'),
  };
}

export function choiceParameter<const Choice extends string>(choices: readonly Choice[], defaultValue: Choice, description: string): QueryParameter<Choice> {
  return {
    schema: Type.Optional(Type.Union(choices.map((choice) => Type.Literal(choice)), { default: defaultValue, description, examples: choices.filter((choice) => choice !== defaultValue) })),
    read: (raw) => (choices as readonly string[]).includes(raw) ? (raw as Choice) : fail(`must be one of ${choices.join(', ')}`),
  };
}

/** A free-text value (an id, a code), trimmed; blank means not given. */
export function textParameter(maxLength: number, description: string, examples: string[] = []): QueryParameter<string | undefined> {
  return {
    schema: Type.Optional(Type.String({ maxLength, description, ...(examples.length > 0 ? { examples } : {}) })),
    read(raw) {
      const value = raw.trim();
      if (value.length > maxLength) return fail(`must be at most ${maxLength} characters`);
      return value === '' ? undefined : value;
    },
  };
}

export const MAX_SEARCH_LENGTH = 256;
export const MAX_SEARCH_WORDS = 32;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * Search text is split into words (runs of letters and digits); punctuation and quotes only separate
 * words, so no input is query syntax. Text without any word is no search at all.
 */
export const searchParameter = (searched: string): QueryParameter<string[] | undefined> => ({
  schema: Type.Optional(
    Type.String({
      maxLength: MAX_SEARCH_LENGTH,
      description: `Full-text search over ${searched}: items having every word, ranked by relevance (best first), then in list order; when more than ${RANKED_SEARCH_LIMIT} items match, in list order only. Words are runs of letters and digits, matched without regard to case or accents, and by stem (\`shelters\` finds \`shelter\`). Punctuation and quotes are ignored. At most ${MAX_SEARCH_LENGTH} characters and ${MAX_SEARCH_WORDS} words.`,
      examples: ['food bank'],
    }),
  ),
  read(raw) {
    if (raw.length > MAX_SEARCH_LENGTH) return fail(`must be at most ${MAX_SEARCH_LENGTH} characters`);
    const words = raw.match(WORD) ?? [];
    if (words.length > MAX_SEARCH_WORDS) return fail(`must have at most ${MAX_SEARCH_WORDS} words`);
    return words.length === 0 ? undefined : words;
  },
});

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/**
 * An ISO 8601 (RFC 3339) date or date-time as an instant: `2026-11-01` (midnight UTC),
 * `2026-11-01T09:30`, `2026-11-01T09:30:00Z`, `2026-11-01T09:30:00.5+01:00`. Without an offset, UTC.
 */
export function readInstant(raw: string): Date | undefined {
  const match = DATE_TIME.exec(raw);
  if (match === null) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset = 'Z'] = match;
  const parts = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = parts;
  const millis = Date.UTC(y, mo - 1, d, h, mi, s, Math.floor(Number(`0${fraction || '.0'}`) * 1000));
  const date = new Date(millis);
  // Date.UTC rolls over (February 30 becomes March 2); a real date reads back the same.
  if (y < 1 || date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  if (offset.toUpperCase() === 'Z') return date;
  const [offsetHours, offsetMinutes] = offset.slice(1).split(':').map(Number) as [number, number];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = offset.startsWith('-') ? -1 : 1;
  return new Date(millis - sign * (offsetHours * 60 + offsetMinutes) * 60_000);
}

export const instantParameter = (description: string): QueryParameter<string> => ({
  schema: Type.Optional(Type.String({ description, examples: ['2026-11-01', '2026-11-01T09:30:00Z'] })),
  read: (raw) => readInstant(raw)?.toISOString() ?? fail('must be an ISO 8601 date (2026-11-01) or date-time (2026-11-01T09:30:00Z)'),
});

export type QueryParameters = Record<string, QueryParameter>;

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
