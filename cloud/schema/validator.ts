// The one schema validator of the project (docs/schema-library.md): TypeBox declarations compiled by
// Ajv. A failed check is described as `where.field: expected …, got <value>`, the `x-expected` phrase
// of the failing schema when it has one (`rig.boards[2].port: expected rfc2217://host:port, got "ttyUSB0"`).
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ERROR_CODE, EXPECTED } from './annotations.ts';

export { ERROR_CODE, EXPECTED };

function newAjv(opts: { coerceTypes?: boolean; useDefaults?: boolean } = {}): Ajv {
  // verbose: a failed check carries the value and the schema it failed, for the message.
  // strictRequired off: an if/then rule may require a property declared beside it, not inside it.
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, verbose: true, ...opts });
  (addFormatsModule as unknown as (a: Ajv, f: string[]) => Ajv)(ajv, ['date-time', 'uri']);
  ajv.addKeyword({ keyword: EXPECTED, schemaType: 'string' });
  ajv.addKeyword({ keyword: ERROR_CODE, schemaType: 'string' });
  return ajv;
}

const strictAjv = newAjv();
/** For environment variables: strings are coerced to the declared types and defaults filled in. */
const envAjv = newAjv({ coerceTypes: true, useDefaults: true });

export interface Checker<S extends TSchema> {
  readonly schema: S;
  /** True when `value` has the shape; `problems(value)` then is empty. */
  (value: unknown): value is Static<S>;
  /** Every problem of the last failed check, first the one to report. */
  problems(): Problem[];
}

export interface Problem {
  /** `boards[2].port`; '' for the value itself. */
  field: string;
  /** The offending value (undefined when it is missing). */
  value: unknown;
  expected: string;
  /** The catalog code the failing schema names, if any. */
  code: string | undefined;
  keyword: string;
  /** The schema is writeOnly (a secret): the message never shows the value. */
  secret?: boolean;
}

/** Compiles a schema once; the checker is then a plain function call. */
export function checker<S extends TSchema>(schema: S, opts: { env?: boolean } = {}): Checker<S> {
  // Compiled on first use: a command that never checks this shape never pays for it.
  let validate: ValidateFunction | undefined;
  const check = ((value: unknown) => (validate ??= (opts.env ? envAjv : strictAjv).compile(schema))(value)) as Checker<S>;
  Object.defineProperty(check, 'schema', { value: schema });
  check.problems = () => problemsOf(validate?.errors ?? []);
  return check;
}

const TOP_LEVEL_KEY = /^\/([^/~\d][^/~]*)$/;

function fieldOf(instancePath: string, extra?: string): string {
  // The common case, one key of the checked object (`/x-device-nonce`), without splitting.
  const top = extra === undefined ? TOP_LEVEL_KEY.exec(instancePath) : null;
  if (top) return top[1]!;
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function defaultExpected(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      return p.type === 'integer' ? 'a whole number' : `${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}`;
    case 'pattern':
      return `a string matching ${String(p.pattern)}`;
    case 'enum':
      return `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return JSON.stringify(p.allowedValue);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `a number ${String(p.comparison)} ${String(p.limit)}`;
    case 'minLength':
      return `at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `at most ${String(p.limit)} characters`;
    case 'minItems':
      return `at least ${String(p.limit)} items`;
    case 'maxItems':
      return `at most ${String(p.limit)} items`;
    case 'minProperties':
      return `at least ${String(p.limit)} keys`;
    case 'additionalProperties':
      return 'no such key';
    case 'format':
      return `a ${String(p.format)}`;
    case 'not':
    case 'false schema':
      return 'nothing here';
    default:
      return e.message ?? e.keyword;
  }
}

function problemsOf(errors: ErrorObject[]): Problem[] {
  const out: Problem[] = [];
  for (const e of errors) {
    // An if/then rule reports its then-branch errors and one more for itself: keep the former.
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    const schema = (e.parentSchema ?? {}) as Record<string, unknown>;
    if (e.keyword === 'required') {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      const prop = ((schema.properties as Record<string, Record<string, unknown>> | undefined)?.[missing] ?? {}) as Record<string, unknown>;
      out.push({
        field: fieldOf(e.instancePath, missing),
        value: undefined,
        expected: (prop[EXPECTED] as string | undefined) ?? 'a value',
        // A missing property is the object's problem when the object names a code (the signed-request
        // headers: missing_header), else the code a bad value of the property would get.
        code: (schema[ERROR_CODE] as string | undefined) ?? (prop[ERROR_CODE] as string | undefined),
        keyword: 'required',
      });
      continue;
    }
    if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      out.push({ field: fieldOf(e.instancePath, key), value: (e.data as Record<string, unknown>)[key], expected: 'no such key', code: schema[ERROR_CODE] as string | undefined, keyword: e.keyword });
      continue;
    }
    out.push({
      field: fieldOf(e.instancePath),
      value: schema.writeOnly === true ? undefined : e.data,
      expected: (schema[EXPECTED] as string | undefined) ?? defaultExpected(e),
      code: schema[ERROR_CODE] as string | undefined,
      keyword: e.keyword,
      ...(schema.writeOnly === true ? { secret: true } : {}),
    });
  }
  return out;
}

/** A value as a message shows it: JSON for scalars (strings cut to 64 characters), a word for the rest. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return value.length === 0 ? '[]' : 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  if (typeof value === 'string' && value.length > 64) return JSON.stringify(value.slice(0, 64) + '…');
  return JSON.stringify(value);
}

/** `where.field: expected …, got …` */
export function describeProblem(p: Problem, where?: string): string {
  const at = [where, p.field].filter((s) => s !== undefined && s !== '').join(p.field.startsWith('[') ? '' : '.');
  if (p.keyword === 'additionalProperties') return `${at}: unknown key`;
  return `${at}: expected ${p.expected}, got ${p.secret ? 'another value (not shown: a secret)' : shown(p.value)}`;
}

/** The value as error details may carry it: scalars only, strings cut to 64 characters. */
export function detailValue(value: unknown): unknown {
  if (typeof value === 'string') return value.slice(0, 64);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  return null;
}

/** `^(?:DEBUG|INFO)$` accepted in any case, for a JSON Schema pattern (which has no flags). */
export function anyCase(words: readonly string[]): string {
  const letters = (w: string) => [...w].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return `(?:${words.map(letters).join('|')})`;
}
