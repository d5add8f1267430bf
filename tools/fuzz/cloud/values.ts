// Values for any route of the cloud's route table (cloud/schema/routes.ts), read from its schemas:
// path parameters, query parameters, headers and JSON bodies. Names the fuzz knows get domain values
// (the fuzz track, its devices, the cloud's functions); anything else is drawn from its schema, with a
// string one past its maxLength and a number one past its maximum now and then.
import type { TSchema } from '@sinclair/typebox';
import { CLOUD_FUNCTIONS, LOG_LEVELS } from '../../../cloud/functions.ts';
import { enc, FUZZ_TRACK, fuzzUuid, fuzzVersion, JUNK_SEGMENTS, type GenContext } from './context.ts';

/** A function name for the appconfig routes: the cloud's own mostly, an unknown or junk one now and then. */
export function functionName(ctx: GenContext): string {
  const { rng } = ctx;
  return rng.weighted([
    [8, rng.pick(CLOUD_FUNCTIONS)],
    [1, 'svc-func-nope'],
    [1, enc(rng.pick(['other', ...JUNK_SEGMENTS]))],
  ] as const);
}

/** Path parameters by name: the fuzz track and devices, never the canary's. */
const PARAMS: Record<string, (ctx: GenContext) => string> = {
  class: () => FUZZ_TRACK.cls,
  product_hex: (ctx) => (ctx.rng.chance(0.5) ? FUZZ_TRACK.productHex : FUZZ_TRACK.productHex.toLowerCase()),
  application: () => FUZZ_TRACK.application,
  version: fuzzVersion,
  uuid: fuzzUuid,
  function_name: functionName,
};

/** Headers by (lower-case) name; the signature headers are made by generators.ts. */
const HEADERS: Record<string, (ctx: GenContext) => string> = {
  range: (ctx) => ctx.rng.pick(['bytes=0-99', 'bytes=-10', 'bytes=5-', 'bytes=0-0,5-9', 'bytes=99999999-', 'bytes=9-1', 'bytes=a-b', 'items=0-1', '']),
  'if-range': (ctx) => ctx.rng.pick([`"${'ab'.repeat(32)}"`, 'Wed, 21 Oct 2015 07:28:00 GMT', 'junk']),
  'if-none-match': (ctx) => ctx.rng.pick(['*', `"${'ab'.repeat(32)}"`, 'junk', '']),
  etag: (ctx) => ctx.rng.pick([`"${'ab'.repeat(32)}"`, 'ab'.repeat(32), 'W/"x"', '"', '']),
  'x-device-uuid': fuzzUuid,
};

/** Body and query fields by name, where a schema alone would rarely give a value the cloud takes. */
const FIELDS: Record<string, (ctx: GenContext) => unknown> = {
  public_key: (ctx) => ctx.keys.p256,
  token: (ctx) => (ctx.rng.chance(0.7) ? ctx.adminToken : ctx.nonSuperToken),
  url: (ctx) => ctx.rng.weighted([[6, 'https://fw.example/a.bin'], [1, 'ftp://x'], [1, `https://x/${'a'.repeat(3000)}`]] as const),
  // Levels are taken in any case (spec 2.7); the odd ones are refused.
  logging: (ctx) => ctx.rng.pick([...LOG_LEVELS, 'info', 'Error', 'VERBOSE', 5, null]),
};

/** Strings the fuzz would use anyway; one that fits a string schema's pattern is picked for it. */
function stringCandidates(ctx: GenContext): string[] {
  const { rng } = ctx;
  return [
    FUZZ_TRACK.cls,
    FUZZ_TRACK.productHex,
    fuzzVersion(ctx),
    rng.pick(ctx.devices).uuid,
    rng.pick(CLOUD_FUNCTIONS),
    'cd'.repeat(32),
    String(rng.int(0, 100)),
    `fz-group-${rng.int(1, 3)}`,
    new Date(Date.now() - rng.int(0, 30) * 86_400_000).toISOString(),
  ];
}

interface Schema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  minProperties?: number;
  items?: Schema;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

function sampleString(ctx: GenContext, s: Schema): string {
  const { rng } = ctx;
  if (s.maxLength !== undefined && rng.chance(0.05)) return 'x'.repeat(s.maxLength + 1);
  if (s.format === 'date-time') return new Date(Date.now() - rng.int(0, 30) * 86_400_000).toISOString();
  const pattern = s.pattern === undefined ? undefined : new RegExp(s.pattern, 'u');
  const fits = stringCandidates(ctx).filter((c) => (!pattern || pattern.test(c)) && c.length >= (s.minLength ?? 0) && c.length <= (s.maxLength ?? Infinity));
  return fits.length > 0 ? rng.pick(fits) : rng.string(rng.int(1, 16), 'abcxyz019-_');
}

/** A value for `schema` (a field called `name`): valid mostly, one past a limit now and then. */
export function sample(ctx: GenContext, schema: TSchema, name?: string): unknown {
  const { rng } = ctx;
  const s = schema as Schema;
  const field = name === undefined ? undefined : FIELDS[name];
  if (field && rng.chance(0.8)) return field(ctx);
  if ('const' in s) return s.const;
  if (s.enum) return rng.pick(s.enum);
  if (s.anyOf) return sample(ctx, rng.pick(s.anyOf) as TSchema, name);
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = Object.entries(s.properties ?? {});
      for (const [key, prop] of props) {
        if (s.required?.includes(key) || rng.chance(0.5)) out[key] = sample(ctx, prop as TSchema, key);
      }
      for (const [key, prop] of props) {
        if (Object.keys(out).length >= (s.minProperties ?? 0)) break;
        out[key] ??= sample(ctx, prop as TSchema, key);
      }
      return out;
    }
    case 'array': {
      const most = s.maxItems ?? 4;
      const n = rng.chance(0.05) ? most + 1 : rng.int(0, Math.min(most, 4));
      return Array.from({ length: n }, () => sample(ctx, (s.items ?? {}) as TSchema, name));
    }
    case 'integer':
    case 'number': {
      const min = s.minimum ?? 0;
      const max = s.maximum ?? 1_000_000;
      return rng.chance(0.05) ? rng.pick([min - 1, max + 1]) : rng.int(min, max);
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'string':
      return sampleString(ctx, s);
    default:
      return rng.string(rng.int(1, 8), 'abc');
  }
}

/** A path parameter: by its name, or from its schema. */
export function paramValue(ctx: GenContext, name: string, schema: TSchema | undefined): string {
  const known = PARAMS[name];
  if (known) return known(ctx);
  return enc(String(schema ? sample(ctx, schema, name) : ctx.rng.pick(JUNK_SEGMENTS)));
}

/** An optional header's value: by its name, or from its schema. */
export function headerValue(ctx: GenContext, name: string, schema: TSchema): string {
  const known = HEADERS[name];
  return known ? known(ctx) : String(sample(ctx, schema, name));
}
