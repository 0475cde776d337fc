import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';

/**
 * Validates a tabular data package against its own `datapackage.json`, as Frictionless's validators
 * do, written from the specifications (Data Package and Table Schema v2, datapackage.org; v1's rules
 * where v2 keeps them): no maintained Frictionless validator installs here (frictionless-py needs
 * PyPI; the JavaScript tableschema and datapackage libraries are archived), so this is the check,
 * run by the tests on every package the API makes.
 *
 * Checked: the header row names the schema's fields in order; every value casts to its field's type
 * and format (string as uuid, email or uri; number; integer; boolean; date; datetime); `required`,
 * `unique`, `enum`, `minLength`, `maxLength` and `pattern`; the primary key (present and unique); and
 * every foreign key (each value that is not missing names a row of the table referred to).
 * `missingValues` of the schema (default `[""]`) or of the field (v2) say which texts are no value.
 *
 * Where this departs from Frictionless it is stricter, and says so: a uuid must be written in its
 * canonical form (8-4-4-4-12 hexadecimal digits), where frictionless-py accepts whatever Python's
 * uuid.UUID parses (braces, no hyphens, a urn: prefix).
 */

export interface PackageError {
  resource: string;
  /** 1-based row of the file, the header being row 1; undefined for a problem of the whole table. */
  row?: number;
  field?: string;
  message: string;
}

interface Field {
  name: string;
  type?: string;
  format?: string;
  constraints?: { required?: boolean; unique?: boolean; enum?: unknown[]; minLength?: number; maxLength?: number; pattern?: string };
  missingValues?: string[];
  trueValues?: string[];
  falseValues?: string[];
}

interface Resource {
  name: string;
  path: string;
  schema: { fields: Field[]; primaryKey?: string | string[]; missingValues?: string[]; foreignKeys?: Array<{ fields: string | string[]; reference: { resource: string; fields: string | string[] } }> };
}

const list = (value: string | string[]): string[] => (typeof value === 'string' ? [value] : value);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$|^(?:NaN|INF|-INF)$/;
const INTEGER = /^[+-]?\d+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?$/;

/** Why `text` is not a value of `field`, or undefined when it is. */
function castProblem(field: Field, text: string): string | undefined {
  const type = field.type ?? 'string';
  const format = field.format ?? 'default';
  switch (type) {
    case 'string':
      if (format === 'uuid' && !UUID.test(text)) return `"${text}" is not a uuid`;
      if (format === 'email' && !EMAIL.test(text)) return `"${text}" is not an email address`;
      if (format === 'uri' && !(URL.canParse(text) && /^[a-z][a-z0-9+.-]*:/i.test(text))) return `"${text}" is not a uri`;
      return undefined;
    case 'number':
      return NUMBER.test(text) ? undefined : `"${text}" is not a number`;
    case 'integer':
      return INTEGER.test(text) ? undefined : `"${text}" is not an integer`;
    case 'boolean':
      return [...(field.trueValues ?? ['true', 'True', 'TRUE', '1']), ...(field.falseValues ?? ['false', 'False', 'FALSE', '0'])].includes(text) ? undefined : `"${text}" is not a boolean`;
    case 'date':
      return DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) ? undefined : `"${text}" is not a date (YYYY-MM-DD)`;
    case 'datetime':
      return DATETIME.test(text) && !Number.isNaN(Date.parse(text)) ? undefined : `"${text}" is not a datetime (ISO 8601)`;
    default:
      return `type ${type} is not one this check knows`;
  }
}

/** Checks every resource of the package in `directory`; returns every problem found (none: valid). */
export function validateTabularPackage(directory: string): PackageError[] {
  const descriptor = JSON.parse(readFileSync(join(directory, 'datapackage.json'), 'utf8')) as { resources: Resource[] };
  const errors: PackageError[] = [];
  const values = new Map<string, Array<Array<string | null>>>();
  for (const resource of descriptor.resources) {
    const { schema } = resource;
    const records = parse(readFileSync(join(directory, resource.path)), { relaxColumnCount: true, bom: true }) as string[][];
    const [header = [], ...rows] = records;
    const names = schema.fields.map((field) => field.name);
    if (header.join(',') !== names.join(',')) errors.push({ resource: resource.name, message: `header ${header.join(',')} is not the schema's fields ${names.join(',')}` });
    const typed: Array<Array<string | null>> = [];
    const seen = schema.fields.map(() => new Set<string>());
    for (const [index, row] of rows.entries()) {
      const line = index + 2;
      if (row.length !== names.length) errors.push({ resource: resource.name, row: line, message: `${row.length} values for ${names.length} fields` });
      const cells = schema.fields.map((field, column) => {
        const text = row[column] ?? '';
        const missing = field.missingValues ?? schema.missingValues ?? [''];
        const value = missing.includes(text) ? null : text;
        const constraints = field.constraints ?? {};
        const problem = (message: string) => errors.push({ resource: resource.name, row: line, field: field.name, message });
        if (value === null) {
          if (constraints.required === true) problem('is required and missing');
          return null;
        }
        const cast = castProblem(field, value);
        if (cast !== undefined) problem(cast);
        if (constraints.enum !== undefined && !constraints.enum.map(String).includes(value)) problem(`"${value}" is not one of ${constraints.enum.join(', ')}`);
        if (constraints.minLength !== undefined && value.length < constraints.minLength) problem(`is shorter than ${constraints.minLength}`);
        if (constraints.maxLength !== undefined && value.length > constraints.maxLength) problem(`is longer than ${constraints.maxLength}`);
        if (constraints.pattern !== undefined && !new RegExp(`^(?:${constraints.pattern})$`, 'u').test(value)) problem(`does not match ${constraints.pattern}`);
        if (constraints.unique === true) {
          if (seen[column]!.has(value)) problem(`"${value}" is not unique`);
          seen[column]!.add(value);
        }
        return value;
      });
      typed.push(cells);
    }
    if (schema.primaryKey !== undefined) {
      const key = list(schema.primaryKey).map((name) => names.indexOf(name));
      const keys = new Set<string>();
      for (const [index, cells] of typed.entries()) {
        const parts = key.map((column) => cells[column]);
        if (parts.some((part) => part === null || part === undefined)) errors.push({ resource: resource.name, row: index + 2, message: 'primary key missing' });
        const joined = JSON.stringify(parts);
        if (keys.has(joined)) errors.push({ resource: resource.name, row: index + 2, message: `primary key ${joined} repeated` });
        keys.add(joined);
      }
    }
    values.set(resource.name, typed);
  }
  for (const resource of descriptor.resources) {
    for (const foreignKey of resource.schema.foreignKeys ?? []) {
      const target = descriptor.resources.find((candidate) => candidate.name === (foreignKey.reference.resource === '' ? resource.name : foreignKey.reference.resource));
      if (target === undefined) {
        errors.push({ resource: resource.name, message: `foreign key to ${foreignKey.reference.resource}, which is not in the package` });
        continue;
      }
      const targetColumns = list(foreignKey.reference.fields).map((name) => target.schema.fields.findIndex((field) => field.name === name));
      const known = new Set(values.get(target.name)!.map((cells) => JSON.stringify(targetColumns.map((column) => cells[column]))));
      const columns = list(foreignKey.fields).map((name) => resource.schema.fields.findIndex((field) => field.name === name));
      for (const [index, cells] of values.get(resource.name)!.entries()) {
        const parts = columns.map((column) => cells[column]);
        if (parts.every((part) => part === null)) continue;
        if (!known.has(JSON.stringify(parts))) errors.push({ resource: resource.name, row: index + 2, field: list(foreignKey.fields).join(','), message: `${parts.join(',')} names no row of ${target.name}` });
      }
    }
  }
  return errors;
}
