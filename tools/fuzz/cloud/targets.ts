// What the cloud fuzz sends requests to: every route of the cloud's route table
// (cloud/schema/routes.ts), so that a new route is fuzzed as soon as it is declared, plus the canary's
// routes and paths that are no route. Most routes are built from their declaration alone (values.ts);
// a few have a builder of their own, for rules the table cannot say: which key signs for which
// device, and that the canary is only ever written to with a broken token.
import { DeviceSignatureHeaders } from '../../../cloud/schema/api.ts';
import { ROUTES, type RouteSpec } from '../../../cloud/schema/routes.ts';
import { CANARY_TRACK, enc, FUZZ_TRACK, fuzzUuid, JUNK_SEGMENTS, JUNK_VERSIONS, METHODS, pathOf, type Built, type GenContext } from './context.ts';
import { bearer, binarySize, ffce, jsonBody, signatureHeaders } from './generators.ts';
import { headerValue, paramValue, sample } from './values.ts';

export interface Target {
  /** The route's operationId, or what the target is for. */
  name: string;
  /** Its share of the requests that are not raw malformed HTTP. */
  weight: number;
  route?: RouteSpec;
  build(ctx: GenContext): Built;
}

type Builder = (ctx: GenContext, route: RouteSpec) => Built;

const SIGNATURE_HEADERS = Object.keys(DeviceSignatureHeaders.properties);

function binaryMaxBytes(route: RouteSpec): number {
  const max = route.body?.binaryMaxBytes;
  if (max === undefined) throw new Error(`${route.operationId}: the route table gives no binaryMaxBytes`);
  return max;
}

/** Any route, from its declaration: parameters, query, headers and body drawn from its schemas. */
export function fromDeclaration(ctx: GenContext, route: RouteSpec): Built {
  const { rng } = ctx;
  const declared = route.headers?.properties ?? {};
  const signed = SIGNATURE_HEADERS.every((h) => h in declared);
  const device = rng.pick(ctx.devices);
  const params = route.params?.properties ?? {};
  let path = route.path.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => (signed && name === 'uuid' && rng.chance(0.9) ? device.uuid : paramValue(ctx, name, params[name])));
  const query = Object.entries(route.query?.properties ?? {})
    .filter(() => rng.chance(0.3))
    .map(([name, schema]) => `${name}=${encodeURIComponent(String(sample(ctx, schema, name)))}`);
  if (query.length > 0) path += `?${query.join('&')}`;
  const headers: [string, string][] = [];
  if (route.bearer) headers.push(...bearer(ctx));
  if (signed) headers.push(...signatureHeaders(ctx, device));
  for (const [name, schema] of Object.entries(declared)) {
    if (!(signed && SIGNATURE_HEADERS.includes(name)) && rng.chance(0.3)) headers.push([name, headerValue(ctx, name, schema)]);
  }
  let body: Buffer | undefined;
  const spec = route.body;
  if (spec?.json && (spec.required || rng.chance(0.8))) {
    const json = jsonBody(ctx, () => sample(ctx, spec.json!));
    body = json.body;
    headers.push(...json.headers);
  } else if (spec?.binaryMaxBytes !== undefined) {
    body = rng.bytes(binarySize(ctx, spec.binaryMaxBytes));
    headers.push(['Content-Type', rng.weighted([[12, 'application/octet-stream'], [1, 'application/json']] as const)]);
  }
  return { method: route.method.toUpperCase(), path, headers, ...(body ? { body } : {}), label: route.operationId };
}

const otaCheck: Builder = (ctx) => {
  const { rng } = ctx;
  const track = rng.weighted([
    [3, CANARY_TRACK],
    [3, FUZZ_TRACK],
    [2, { cls: rng.string(rng.int(1, 12), 'abc-._'), productHex: `0x${rng.u32().toString(16).padStart(8, '0')}`, application: 'app' }],
  ] as const);
  const productHex = rng.chance(0.3) ? track.productHex.toLowerCase() : track.productHex;
  let query = '';
  const q = rng.int(0, 5);
  if (q === 1) query = `?current_version=2026.${String(rng.int(0, 13)).padStart(2, '0')}.${String(rng.int(0, 40)).padStart(2, '0')}`;
  else if (q === 2) query = `?current_version=${encodeURIComponent(rng.pick(JUNK_VERSIONS))}`;
  else if (q === 3) query = '?current_version=2026.01.01&current_version=2026.01.02';
  else if (q === 4) query = `?current_version=2025.12.01&p${rng.int(0, 1e6)}=${'a'.repeat(rng.int(0, 4000))}`;
  return { method: 'GET', path: pathOf('ota', track.cls, productHex, track.application) + query, headers: [], label: 'ota' };
};

/** A backup request signed by a fuzz device; the canary is only addressed with the wrong key or a mismatching X-Device-UUID. */
const backup: Builder = (ctx, route) => {
  const { rng } = ctx;
  const method = route.method.toUpperCase();
  const device = rng.pick(ctx.devices);
  const pathUuid = rng.weighted([
    [12, device.uuid],
    [1, ctx.canary.uuid],
    [1, rng.pick(JUNK_SEGMENTS)],
  ] as const);
  const headerUuid = pathUuid === ctx.canary.uuid && rng.chance(0.5) ? ctx.canary.uuid : device.uuid;
  const headers = signatureHeaders(ctx, device, headerUuid);
  let body: Buffer | undefined;
  if (method === 'POST') {
    const size = binarySize(ctx, binaryMaxBytes(route));
    body = rng.chance(0.9) ? ffce(ctx, size) : rng.bytes(size);
    headers.push(['Content-Type', rng.weighted([[12, 'application/octet-stream'], [1, 'application/json'], [1, 'Application/Octet-Stream; x=y']] as const)]);
    if (rng.chance(0.3)) headers.push(['ETag', rng.pick([`"${'ab'.repeat(32)}"`, 'ab'.repeat(32), 'W/"x"', '"', ''])]);
    if (rng.chance(0.2)) headers.push(['If-None-Match', rng.pick(['*', `"${'ab'.repeat(32)}"`, Array(20).fill('"x"').join(','), ''])]);
    if (rng.chance(0.05)) headers.push(['Expect', '100-continue']);
  } else if (method === 'GET' && rng.chance(0.2)) {
    headers.push(['If-None-Match', rng.pick(['*', `"${'ab'.repeat(32)}"`, 'junk'])]);
  }
  return { method, path: pathOf('devices', enc(pathUuid), 'backup'), headers, ...(body ? { body } : {}), label: `backup ${method}` };
};

/** An enrollment: a fuzz device keeps its own key (so that its signed requests go on working), others get any. */
const enrollDevice: Builder = (ctx) => {
  const { rng } = ctx;
  const uuid = fuzzUuid(ctx);
  const own = ctx.devices.find((d) => d.uuid === uuid);
  const keyName = own && rng.chance(0.7) ? undefined : rng.pick(['p256', 'pkcs8', 'sec1', 'p384', 'rsa', 'ed25519', 'junk', 'two-blocks', 'cut'] as const);
  const key =
    keyName === undefined
      ? own!.publicKeyPem
      : keyName === 'junk'
        ? rng.pick(['', 'hello', '-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n', 'x'.repeat(5000)])
        : keyName === 'two-blocks'
          ? ctx.keys.p256 + ctx.keys.pkcs8
          : keyName === 'cut'
            ? ctx.keys.p256.slice(0, rng.int(0, ctx.keys.p256.length))
            : ctx.keys[keyName];
  const { body, headers } = jsonBody(ctx, () => ({ public_key: key }));
  return { method: 'PUT', path: pathOf('admin', 'devices', uuid), headers: [...bearer(ctx, own === undefined || keyName === undefined), ...headers], body, label: `admin put device (${keyName ?? 'own key'})` };
};

/** Routes with a builder of their own; every other route is built from its declaration. */
export const OWN_BUILDERS: Record<string, Builder> = { otaCheck, putBackup: backup, getBackup: backup, deleteBackup: backup, enrollDevice };

/** Shares of the routes the fuzz leans on; any other route gets DEFAULT_WEIGHT. */
const WEIGHTS: Record<string, number> = { otaCheck: 20, putBackup: 11, getBackup: 7, deleteBackup: 2, enrollDevice: 4, releaseFirmware: 4 };
const DEFAULT_WEIGHT = 2;

/** Names given a builder or a weight above that are no operationId of the route table (a renamed route). */
export function unknownRouteNames(): string[] {
  const known = new Set(ROUTES.map((r) => r.operationId));
  return [...Object.keys(OWN_BUILDERS), ...Object.keys(WEIGHTS)].filter((name) => !known.has(name));
}

/** The canary read with a valid token (the method fixed), or written to: a valid token only where the answer must be 409. */
function canaryRequest(ctx: GenContext): Built {
  const { rng } = ctx;
  const track = pathOf('admin', 'firmware', CANARY_TRACK.cls, CANARY_TRACK.productHex, CANARY_TRACK.application);
  const release = `${track}/${CANARY_TRACK.version}`;
  const device = pathOf('admin', 'devices', ctx.canary.uuid);
  switch (rng.int(0, 5)) {
    case 0:
      return { method: 'GET', path: device, headers: bearer(ctx), label: 'admin get canary device', fixedMethod: true };
    case 1:
      return { method: 'GET', path: track, headers: bearer(ctx), label: 'admin list canary firmware', fixedMethod: true };
    case 2:
      return { method: 'PUT', path: release, headers: [...bearer(ctx), ['Content-Type', 'application/json']], body: Buffer.from('{"url":"https://fw.example/again.bin"}'), label: 'admin re-release canary (409)', fixedMethod: true };
    case 3:
      return { method: 'POST', path: `${release}/revoke`, headers: bearer(ctx, false), label: 'canary revoke, bad token' };
    case 4:
      return { method: 'DELETE', path: device, headers: bearer(ctx, false), label: 'canary delete, bad token' };
    default:
      return { method: 'PUT', path: device, headers: [...bearer(ctx, false), ['Content-Type', 'application/json']], body: Buffer.from(JSON.stringify({ public_key: ctx.keys.p256 })), label: 'canary re-enroll, bad token' };
  }
}

/** Paths that are no route, next to the table's: its first segments bent, and junk. */
function miscRequest(ctx: GenContext): Built {
  const { rng } = ctx;
  const first = rng.pick(ROUTES).path.split('/')[1]!;
  const path = rng.pick([`/${first}`, `/${first}/`, `//${first}`, `/${first.toUpperCase()}`, `/${first}?x=1`, '/', '/does/not/exist', `/${'a'.repeat(rng.int(1, 8000))}`, '/%00', '/%ff%fe']);
  return { method: rng.weighted([[6, 'GET'], [1, 'HEAD'], [1, rng.pick(METHODS)]] as const), path, headers: [], label: 'misc' };
}

export const TARGETS: Target[] = [
  ...ROUTES.map((route): Target => {
    const build = OWN_BUILDERS[route.operationId] ?? fromDeclaration;
    return { name: route.operationId, weight: WEIGHTS[route.operationId] ?? DEFAULT_WEIGHT, route, build: (ctx) => build(ctx, route) };
  }),
  { name: 'canary', weight: 4, build: canaryRequest },
  { name: 'misc', weight: 4, build: miscRequest },
];
