// A seeded, bounded fuzzer for the cloud API. From one seed it generates a fixed sequence of requests:
// mutated valid requests of every route (OTA; backup POST/GET/DELETE signed by a real device key;
// admin and appconfig with a super-user JWT; health), malformed paths, headers and bodies, and raw
// malformed HTTP (bad request lines, bad chunk sizes, bodies cut short by FIN, absolute-form targets,
// oversized headers). Everything goes over raw loopback sockets, so that nothing is normalized on the
// way. It checks: no 5xx; every other error with a body is the JSON error shape; a canary device's
// backup and a canary firmware release stored before the run are byte-identical after it; /health
// still answers. The generator never looks at answers, so a seed replays the same requests
// (signatures differ: ECDSA is randomized, timestamps are the clock's).
//
//   npm run fuzz -- --only cloud --requests 3000 --seed 42 [--concurrency 8] [--url http://127.0.0.1:8080 --token <jwt>]
//
// Without --url it starts a cloud in-process on SQLite in a temporary folder (startFuzzCloud).
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { MAX_BACKUP_BYTES } from '../../cloud/backup/ffce.ts';
import { loadConfig } from '../../cloud/config.ts';
import type { LogRecord } from '../../cloud/logging.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { chunked, errorShapeProblem, httpRequest, rawExchange, type RawResponse, type RawResult, type RawStep, type RawTarget } from './raw-http.ts';
import { Rng, seedFrom } from './rng.ts';

// ---------------------------------------------------------------------------------------------
// A cloud to fuzz, in-process: SQLite in a temporary folder, logs counted.
// ---------------------------------------------------------------------------------------------

export interface FuzzCloud {
  url: string;
  host: string;
  port: number;
  adminToken: string;
  nonSuperToken: string;
  running: RunningCloud;
  /** Records per level, and the ERROR/CRITICAL ones (at most 50 kept). */
  logCounts: Record<string, number>;
  errorLogs: LogRecord[];
  close(): Promise<void>;
}

export async function startFuzzCloud(opts: { env?: Record<string, string> } = {}): Promise<FuzzCloud> {
  const dir = mkdtempSync(join(tmpdir(), 'cloud-fuzz-'));
  const secret = createHash('sha256').update(dir).digest('hex');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: join(dir, 'cloud.sqlite'),
    JWT_SECRET: secret,
    APPCONFIG_DEPLOY_SECONDS: '1',
    APPCONFIG_REFRESH_MS: '1000',
    ...opts.env,
  });
  const logCounts: Record<string, number> = {};
  const errorLogs: LogRecord[] = [];
  const running = await startCloudServer(config, {
    sink: (r) => {
      logCounts[r.level] = (logCounts[r.level] ?? 0) + 1;
      if ((r.level === 'ERROR' || r.level === 'CRITICAL') && errorLogs.length < 50) errorLogs.push(r);
    },
  });
  const key = new TextEncoder().encode(secret);
  const url = new URL(running.url);
  return {
    url: running.url,
    host: url.hostname,
    port: Number(url.port),
    adminToken: await mintToken(key, { subject: 'fuzz', ttlSeconds: 3600 }),
    nonSuperToken: await mintToken(key, { subject: 'fuzz-user', groups: ['users'], ttlSeconds: 3600 }),
    running,
    logCounts,
    errorLogs,
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The generator.
// ---------------------------------------------------------------------------------------------

interface Device {
  uuid: string;
  privateKey: KeyObject;
  publicKeyPem: string;
}

interface GenContext {
  rng: Rng;
  adminToken: string;
  nonSuperToken: string;
  devices: Device[];
  canary: Device;
  keys: Record<'p256' | 'pkcs8' | 'sec1' | 'p384' | 'rsa' | 'ed25519', string>;
  usedNonces: Buffer[];
}

export interface FuzzCase {
  index: number;
  kind: string;
  /** What was sent, short; enough with the seed and index to find it again. */
  label: string;
  steps: RawStep[];
  methods: string[];
  expectResponses: number;
  /** The client itself breaks the exchange (reset, incomplete request): no answer is fine. */
  mayNotAnswer: boolean;
}

const CANARY_TRACK = { cls: 'canary', productHex: '0x0000CA4A', application: 'canary', version: '2026.01.01' };
const FUZZ_TRACK = { cls: 'fz', productHex: '0x0000F022', application: 'fz' };
const FUNCTIONS = ['svc-func-ota', 'svc-func-backup', 'svc-func-appconfig', 'svc-func-health', 'svc-func-admin'];

const JUNK_SEGMENTS = [
  '', '%00', '%ff', '%E0%A4%A', '%zz', '..', '%2e%2e', '%2F', 'a'.repeat(65), 'x'.repeat(300), '%C3%A9', '\u00e9', '*', ' ', '%20',
  '0x', '0xGGGGGGGG', '0X0A0B0C0D', 'null', '-1', '%u0041', '\u00ff\u00fe', 'a;b', 'a,b', '~', '%0d%0a',
];
const JUNK_VERSIONS = ['', '2026.1.01', '2026-01-01', 'latest', '2026.01.01.1', '9999.99.99', '0000.00.00', '2026.13.01', '%00', 'a'.repeat(40), '２０２６.01.01'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'SEARCH', 'PURGE', 'LINK'];

function pathOf(...segments: string[]): string {
  return '/' + segments.join('/');
}

function enc(s: string): string {
  // Keep junk segments as given (they are meant raw); encode only what would break the request line.
  return s.replace(/[ \r\n]/g, (c) => encodeURIComponent(c));
}

function nonce(ctx: GenContext): Buffer {
  const { rng } = ctx;
  if (ctx.usedNonces.length > 0 && rng.chance(0.04)) return rng.pick(ctx.usedNonces); // a replay
  const n = rng.bytes(32);
  if (ctx.usedNonces.length < 256) ctx.usedNonces.push(n);
  return n;
}

/** The four signature headers, mutated now and then (each mutation is a 4xx the cloud must name). */
function signatureHeaders(ctx: GenContext, device: Device, headerUuid = device.uuid): [string, string][] {
  const { rng } = ctx;
  const n = nonce(ctx);
  const skew = rng.weighted([
    [20, 0],
    [1, -400_000],
    [1, 400_000],
    [1, 299_000],
  ] as const);
  let timestamp = new Date(Date.now() + skew).toISOString();
  if (rng.chance(0.03)) timestamp = rng.pick(['2026-02-31T00:00:00Z', 'yesterday', '2026-01-01T00:00:00+01:00', '', ' ', '2026-01-01T00:00:00.0000000000Z']);
  const signer = rng.chance(0.03) ? ctx.devices[(ctx.devices.indexOf(device) + 1) % ctx.devices.length]! : device;
  const signature = sign('sha256', Buffer.concat([n, Buffer.from(timestamp, 'utf8')]), { key: signer.privateKey, dsaEncoding: 'der' });
  const headers: [string, string][] = [
    ['X-Device-UUID', headerUuid],
    ['X-Device-Nonce', n.toString('base64')],
    ['X-Device-Timestamp', timestamp],
    ['X-Device-Signature', signature.toString('base64')],
  ];
  if (rng.chance(0.12)) {
    const i = rng.int(0, 3);
    const [name, value] = headers[i]!;
    const mutation = rng.int(0, 7);
    if (mutation === 0) headers.splice(i, 1); // missing
    else if (mutation === 1) headers.push([name, value]); // duplicated (node joins them: "a, a")
    else if (mutation === 2) headers[i] = [name, value.slice(0, rng.int(0, value.length))]; // cut
    else if (mutation === 3) headers[i] = [name, value.replace(/[A-Za-z]/, '!')]; // not Base64
    else if (mutation === 4) headers[i] = [name, 'A'.repeat(rng.int(100, 8000))]; // long
    else if (mutation === 5) headers[i] = [name, Buffer.from(value, 'utf8').toString('base64url')]; // other alphabet
    else if (mutation === 6) headers[i] = [name, `\u00ff${value}`]; // a non-ASCII byte
    else headers[i] = [name.toUpperCase(), ` ${value} `]; // case and whitespace (fine)
  }
  return headers;
}

function ffce(ctx: GenContext, size: number): Buffer {
  return Buffer.concat([Buffer.from('FFCE'), ctx.rng.bytes(Math.max(0, size - 4))]);
}

function bearer(ctx: GenContext, allowValid = true): [string, string][] {
  const { rng } = ctx;
  const choice = allowValid
    ? rng.weighted([
        [14, 'admin'],
        [1, 'none'],
        [1, 'nonsuper'],
        [1, 'garbage'],
        [1, 'tampered'],
      ] as const)
    : rng.pick(['none', 'nonsuper', 'garbage', 'tampered'] as const);
  switch (choice) {
    case 'admin':
      return [['Authorization', `Bearer ${ctx.adminToken}`]];
    case 'none':
      return [];
    case 'nonsuper':
      return [['Authorization', `Bearer ${ctx.nonSuperToken}`]];
    case 'garbage':
      return [['Authorization', rng.pick(['Bearer', 'Bearer a.b', 'Basic YWRtaW46YWRtaW4=', `Bearer ${'x'.repeat(5000)}`, 'bearer ' + ctx.adminToken, 'Bearer eyJhbGciOiJub25lIn0.eyJncm91cHMiOlsic3VwZXJ1c2VyIl19.'])]];
    case 'tampered': {
      // Not the last character: base64url leaves its low bits unused, so some changes there decode
      // to the same signature (the cloud now refuses such non-canonical signatures too).
      const t = ctx.adminToken;
      const i = rng.int(0, t.length - 2);
      return [['Authorization', `Bearer ${t.slice(0, i)}${t[i] === 'A' ? 'B' : 'A'}${t.slice(i + 1)}`]];
    }
  }
}

/** A JSON body for the admin and appconfig routes: valid now and then, mostly odd. */
function jsonBody(ctx: GenContext, valid: () => unknown): { body: Buffer; headers: [string, string][] } {
  const { rng } = ctx;
  const kind = rng.weighted([
    [8, 'valid'],
    [2, 'deep'],
    [2, 'junk-json'],
    [2, 'not-json'],
    [1, 'huge'],
    [1, 'wrong-type'],
    [1, 'charset'],
    [1, 'gzip'],
    [1, 'none-type'],
    [1, 'proto'],
  ] as const);
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const ct: [string, string] = ['Content-Type', 'application/json'];
  switch (kind) {
    case 'valid':
      return { body: json(valid()), headers: [ct] };
    case 'deep': {
      const depth = rng.pick([1000, 10_000, 30_000]);
      const open = rng.chance(0.5) ? '[' : '{"a":';
      const close = open === '[' ? ']' : '}';
      return { body: Buffer.from(`{"logging":${open.repeat(depth)}1${close.repeat(depth)},"public_key":1}`), headers: [ct] };
    }
    case 'junk-json':
      return { body: json(rng.pick([[], 'string', 42, null, { logging: ['DEBUG'] }, { public_key: { a: 1 } }, { url: 'http://a/\u0000' }, { size: 1e300 }, { sha256: 'AB'.repeat(32), extra: 1 }])), headers: [ct] };
    case 'not-json':
      return { body: Buffer.from(rng.pick(['{', '{"a":}', 'nul', '\u00ef\u00bb\u00bf{}', '{"a":"\ud800"}', "{'a':1}", '\u0000'])), headers: [ct] };
    case 'huge':
      return { body: Buffer.from(JSON.stringify({ logging: 'x'.repeat(rng.pick([60_000, 70_000])) })), headers: [ct] };
    case 'wrong-type':
      return { body: json(valid()), headers: [['Content-Type', rng.pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'json'])]] };
    case 'charset':
      return { body: json(valid()), headers: [['Content-Type', rng.pick(['application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json; charset=utf-8'])]] };
    case 'gzip':
      return { body: rng.chance(0.5) ? gzipSync(json(valid())) : Buffer.from('not gzip'), headers: [ct, ['Content-Encoding', rng.pick(['gzip', 'deflate', 'br', 'identity'])]] };
    case 'none-type':
      return { body: json(valid()), headers: [] };
    case 'proto':
      return { body: Buffer.from('{"__proto__":{"logging":"DEBUG"},"constructor":{"prototype":{}}}'), headers: [ct] };
  }
}

/** Applies 0 to 2 generic mutations to a request: method, path, query, headers, framing. */
function mutateRequest(ctx: GenContext, req: { method: string; path: string; headers: [string, string][]; body?: Buffer }, fixedMethod = false): { req: typeof req; label: string } {
  const { rng } = ctx;
  const labels: string[] = [];
  const n = rng.weighted([
    [6, 0],
    [3, 1],
    [1, 2],
  ] as const);
  for (let i = 0; i < n; i++) {
    const m = rng.int(0, 9);
    if (m === 0 && !fixedMethod) {
      req.method = rng.pick(METHODS);
      labels.push(`method ${req.method}`);
    } else if (m === 1) {
      const [p, q] = req.path.split('?') as [string, string | undefined];
      const segs = p.split('/');
      const at = rng.int(1, segs.length - 1);
      segs[at] = enc(rng.pick(JUNK_SEGMENTS));
      req.path = segs.join('/') + (q === undefined ? '' : `?${q}`);
      labels.push(`segment ${at}`);
    } else if (m === 2) {
      const junk = `${rng.string(rng.int(1, 8), 'abcxyz_[]')}=${rng.string(rng.int(0, 2000), 'a%20+&=')}`;
      req.path += (req.path.includes('?') ? '&' : '?') + junk;
      labels.push('query junk');
    } else if (m === 3) {
      req.path = rng.chance(0.5) ? req.path.toUpperCase() : req.path.replace(/\?|$/, (x) => `/${x}`);
      labels.push('case or trailing slash');
    } else if (m === 4) {
      req.headers.push([rng.pick(['X-Junk', 'Accept', 'Cookie', 'X-Forwarded-For', 'Range', 'If-Match']), rng.string(rng.int(0, 3000), 'abc ;,=')]);
      labels.push('junk header');
    } else if (m === 5) {
      req.headers.push(['Expect', rng.pick(['100-continue', 'junk', '200-ok', ''])]);
      labels.push('expect');
    } else if (m === 6 && req.body) {
      req.body = req.body.subarray(0, rng.int(0, req.body.length));
      labels.push('body cut');
    } else if (m === 7 && req.body && req.body.length > 0) {
      const b = Buffer.from(req.body);
      const at = rng.int(0, b.length - 1);
      b[at] = b[at]! ^ (1 << rng.int(0, 7));
      req.body = b;
      labels.push('body bit flip');
    } else if (m === 8) {
      req.body = Buffer.from(rng.string(rng.int(1, 200), 'xyz'));
      req.headers = req.headers.filter(([k]) => !/^content-length$/i.test(k));
      labels.push('body added');
    } else {
      req.headers = req.headers.filter(() => !rng.chance(0.3));
      labels.push('headers dropped');
    }
  }
  return { req, label: labels.join(', ') };
}

/** `fixedMethod`: a read of the canary with a valid token, whose method must not be mutated into a write. */
type Built = { method: string; path: string; headers: [string, string][]; body?: Buffer; label: string; fixedMethod?: boolean };

function otaRequest(ctx: GenContext): Built {
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
}

function backupRequest(ctx: GenContext): Built {
  const { rng } = ctx;
  const device = rng.pick(ctx.devices);
  const method = rng.weighted([
    [5, 'POST'],
    [3, 'GET'],
    [1, 'DELETE'],
  ] as const);
  // The canary is only ever addressed with the wrong key or a mismatching X-Device-UUID.
  const pathUuid = rng.weighted([
    [12, device.uuid],
    [1, ctx.canary.uuid],
    [1, rng.pick(JUNK_SEGMENTS)],
  ] as const);
  const headerUuid = pathUuid === ctx.canary.uuid && rng.chance(0.5) ? ctx.canary.uuid : device.uuid;
  const headers = signatureHeaders(ctx, device, headerUuid);
  let body: Buffer | undefined;
  if (method === 'POST') {
    const size = rng.weighted([
      [20, rng.int(32, 4096)],
      [2, rng.int(0, 31)],
      [1, MAX_BACKUP_BYTES],
      [1, MAX_BACKUP_BYTES + 1],
    ] as const);
    body = rng.chance(0.9) ? ffce(ctx, size) : rng.bytes(size);
    headers.push(['Content-Type', rng.weighted([[12, 'application/octet-stream'], [1, 'application/json'], [1, 'Application/Octet-Stream; x=y']] as const)]);
    if (rng.chance(0.3)) headers.push(['ETag', rng.pick([`"${'ab'.repeat(32)}"`, 'ab'.repeat(32), 'W/"x"', '"', ''])]);
    if (rng.chance(0.2)) headers.push(['If-None-Match', rng.pick(['*', `"${'ab'.repeat(32)}"`, Array(20).fill('"x"').join(','), ''])]);
    if (rng.chance(0.05)) headers.push(['Expect', '100-continue']);
  } else if (method === 'GET' && rng.chance(0.2)) {
    headers.push(['If-None-Match', rng.pick(['*', `"${'ab'.repeat(32)}"`, 'junk'])]);
  }
  return { method, path: pathOf('devices', enc(pathUuid), 'backup'), headers, ...(body ? { body } : {}), label: `backup ${method}` };
}

function adminRequest(ctx: GenContext): Built {
  const { rng } = ctx;
  const op = rng.weighted([
    [2, 'list-devices'],
    [2, 'get-device'],
    [4, 'put-device'],
    [1, 'delete-device'],
    [2, 'list-firmware'],
    [4, 'put-firmware'],
    [1, 'revoke'],
    [2, 'canary-write'],
  ] as const);
  const fuzzUuid = () => rng.pick([...ctx.devices.map((d) => d.uuid), `fuzz-x-${rng.int(0, 50)}`, enc(rng.pick(JUNK_SEGMENTS))]);
  const version = () => (rng.chance(0.85) ? `2026.${String(rng.int(1, 12)).padStart(2, '0')}.${String(rng.int(1, 30)).padStart(2, '0')}` : enc(rng.pick(JUNK_VERSIONS)));
  const fuzzTrack = pathOf('admin', 'firmware', FUZZ_TRACK.cls, rng.chance(0.5) ? FUZZ_TRACK.productHex : FUZZ_TRACK.productHex.toLowerCase(), FUZZ_TRACK.application);
  switch (op) {
    case 'list-devices':
      return { method: 'GET', path: '/admin/devices', headers: bearer(ctx), label: 'admin list devices' };
    case 'get-device': {
      const canary = rng.chance(0.3);
      return { method: 'GET', path: pathOf('admin', 'devices', canary ? ctx.canary.uuid : fuzzUuid()), headers: bearer(ctx), label: 'admin get device', fixedMethod: canary };
    }
    case 'put-device': {
      const uuid = fuzzUuid();
      // A fuzz device keeps its own key (so that its signed requests go on working), others get any.
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
    }
    case 'delete-device': {
      const uuid = rng.chance(0.5) ? `fuzz-x-${rng.int(0, 50)}` : rng.pick(ctx.devices).uuid;
      return { method: 'DELETE', path: pathOf('admin', 'devices', uuid), headers: bearer(ctx), label: 'admin delete device' };
    }
    case 'list-firmware': {
      const canary = rng.chance(0.3);
      const path = canary ? pathOf('admin', 'firmware', CANARY_TRACK.cls, CANARY_TRACK.productHex, CANARY_TRACK.application) : fuzzTrack;
      return { method: 'GET', path, headers: bearer(ctx), label: 'admin list firmware', fixedMethod: canary };
    }
    case 'put-firmware': {
      const { body, headers } = jsonBody(ctx, () =>
        rng.pick([{}, { url: 'https://fw.example/a.bin', size: rng.int(1, 1e7), sha256: 'cd'.repeat(32) }, { size: 0 }, { url: 'ftp://x' }, { url: `https://x/${'a'.repeat(3000)}` }]),
      );
      return { method: 'PUT', path: `${fuzzTrack}/${version()}`, headers: [...bearer(ctx), ...headers], ...(rng.chance(0.8) ? { body } : {}), label: 'admin release' };
    }
    case 'revoke':
      return { method: 'POST', path: `${fuzzTrack}/${version()}/revoke`, headers: bearer(ctx), label: 'admin revoke' };
    case 'canary-write': {
      // Writes aimed at the canary: a valid token only where the answer must be 409 (the release
      // exists); everything else with a broken or missing token.
      const canaryRelease = pathOf('admin', 'firmware', CANARY_TRACK.cls, CANARY_TRACK.productHex, CANARY_TRACK.application, CANARY_TRACK.version);
      const which = rng.int(0, 3);
      if (which === 0) return { method: 'PUT', path: canaryRelease, headers: [...bearer(ctx), ['Content-Type', 'application/json']], body: Buffer.from('{"size":1}'), label: 'admin re-release canary (409)', fixedMethod: true };
      if (which === 1) return { method: 'POST', path: `${canaryRelease}/revoke`, headers: bearer(ctx, false), label: 'canary revoke, bad token' };
      if (which === 2) return { method: 'DELETE', path: pathOf('admin', 'devices', ctx.canary.uuid), headers: bearer(ctx, false), label: 'canary delete, bad token' };
      return { method: 'PUT', path: pathOf('admin', 'devices', ctx.canary.uuid), headers: [...bearer(ctx, false), ['Content-Type', 'application/json']], body: Buffer.from(JSON.stringify({ public_key: ctx.keys.p256 })), label: 'canary re-enroll, bad token' };
    }
  }
}

function appconfigRequest(ctx: GenContext): Built {
  const { rng } = ctx;
  const fn = rng.weighted([
    [8, rng.pick(FUNCTIONS)],
    [1, 'svc-func-nope'],
    [1, enc(rng.pick(['other', ...JUNK_SEGMENTS]))],
  ] as const);
  const op = rng.int(0, 4);
  if (op === 0) return { method: 'GET', path: '/appconfig', headers: bearer(ctx), label: 'appconfig list' };
  if (op === 1) return { method: 'GET', path: `/appconfig/${fn}`, headers: bearer(ctx), label: 'appconfig get' };
  if (op === 2) {
    const { body, headers } = jsonBody(ctx, () => ({ logging: rng.pick(['DEBUG', 'info', 'WARNING', 'Error', 'CRITICAL', 'VERBOSE', 5, null]) }));
    return { method: 'PATCH', path: `/appconfig/${fn}`, headers: [...bearer(ctx), ...headers], body, label: 'appconfig patch' };
  }
  if (op === 3) return { method: 'POST', path: `/appconfig/${fn}/deploy`, headers: bearer(ctx), label: 'appconfig deploy' };
  return { method: 'DELETE', path: `/appconfig/${fn}`, headers: bearer(ctx), label: 'appconfig delete' };
}

function miscRequest(ctx: GenContext): Built {
  const { rng } = ctx;
  const path = rng.pick(['/health', '/openapi.json', '/', '/does/not/exist', '/health?x=1', '//health', '/health/', '/HEALTH', '/ota', '/devices', '/admin', '/appconfig/', `/${'a'.repeat(rng.int(1, 8000))}`, '/%00', '/%ff%fe']);
  return { method: rng.weighted([[6, 'GET'], [1, 'HEAD'], [1, rng.pick(METHODS)]] as const), path, headers: [], label: 'misc' };
}

/** Raw bytes that are not (quite) HTTP/1.1. */
function malformed(ctx: GenContext): { bytes: RawStep[]; label: string; method: string; mayNotAnswer: boolean } {
  const { rng } = ctx;
  const host = 'Host: 127.0.0.1\r\n';
  const kind = rng.int(0, 21);
  const one = (s: string | Buffer, label: string, method = 'GET') => ({ bytes: [{ write: s }], label, method, mayNotAnswer: false });
  switch (kind) {
    case 0:
      if (rng.chance(0.1)) {
        // Empty lines before a request line are allowed (RFC 9112 2.2): the server waits for more; FIN ends it.
        return { bytes: [{ write: '\r\n\r\n\r\n', end: true }], label: 'empty lines, FIN', method: 'GET', mayNotAnswer: true };
      }
      return one(rng.pick(['GARBAGE\r\n\r\n', 'GET\r\n\r\n', 'GET /health\r\n\r\n', ' GET /health HTTP/1.1\r\n\r\n', 'GET /health HTTP/9.9\r\n' + host + '\r\n', 'GET /health HTTP/1.1 extra\r\n' + host + '\r\n']), 'bad request line');
    case 1:
      return one(Buffer.concat([rng.bytes(rng.int(1, 300)), Buffer.from('\r\n\r\n')]), 'binary garbage');
    case 2:
      return one(`GET ${rng.pick(['http://[/health', 'http://127.0.0.1/health', 'https://x.example/ota/a/0x00000000/a', 'http://user@host/health', 'http:///health', 'ftp://x/health', 'http://x', 'http://x?y', '*', 'health', '127.0.0.1:80'])} HTTP/1.1\r\n${host}\r\n`, 'absolute-form / odd target');
    case 3:
      return one(`GET /health HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(rng.int(16_500, 40_000))}\r\n\r\n`, 'headers over 16 KB');
    case 4: {
      let h = '';
      const n = rng.int(101, 1500);
      for (let i = 0; i < n; i++) h += `X-H${i}: v\r\n`;
      return one(`GET /health HTTP/1.1\r\n${host}${h}\r\n`, `${n} header fields`);
    }
    case 5:
      return one(`POST /admin/devices/x HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${rng.pick(['zz', '-1', 'fffffffffffffffffff', '1;' + 'e'.repeat(20_000), '5\r\nab', ' 5'])}\r\n\r\n`, 'bad chunk size', 'POST');
    case 6: {
      const method = rng.pick(['POST', 'PATCH']);
      const path = method === 'POST' ? '/devices/fuzz-dev-1/backup' : '/appconfig/svc-func-ota';
      const declared = rng.int(10, 5000);
      return { bytes: [{ write: `${method} ${path} HTTP/1.1\r\n${host}Content-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n\r\n${'x'.repeat(rng.int(0, declared - 1))}`, end: true }], label: 'body cut short, FIN', method, mayNotAnswer: false };
    }
    case 7:
      return one(`GET /health HTTP/1.1\r\n${host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 'content-length and chunked');
    case 8:
      return one(`GET /health HTTP/1.1\r\n${host}Content-Length: ${rng.pick(['-1', 'abc', '1e3', '99999999999999999999', '1, 2'])}\r\n\r\n`, 'bad content-length');
    case 9:
      return one(`GET /health HTTP/1.1\r\n${host}${rng.pick(['Bad Header: x', 'X-A\u0000: y', ': empty name', 'X-Fold: a\r\n folded', 'NoColon', 'X-Ctl: a\u0001b'])}\r\n\r\n`, 'bad header line');
    case 10:
      return one('GET /health HTTP/1.1\r\n\r\n', 'no Host');
    case 11:
      return one(`CONNECT ${rng.pick(['127.0.0.1:80', '/health', 'x'])} HTTP/1.1\r\n${host}\r\n`, 'CONNECT', 'CONNECT');
    case 12:
      return one(`GET /health HTTP/1.1\r\n${host}Expect: ${rng.pick(['junk', '100-continue, junk', '101-switch'])}\r\n\r\n`, 'Expect');
    case 13:
      return one(`GET /health HTTP/1.1\r\n${host}Content-Length: 5\r\n\r\nhello`, 'GET with a body');
    case 14:
      return one(`GET /${'%'.repeat(rng.int(1, 5))}${rng.pick(['/../../etc/passwd', '\u00ff\u00fe', '%c0%af'])} HTTP/1.1\r\n${host}\r\n`, 'odd bytes in the path');
    case 15:
      return {
        bytes: [{ write: `GET /health HTTP/1.1\r\n${host}\r\nGET /ota/canary/0x0000CA4A/canary HTTP/1.1\r\n${host}Connection: close\r\n\r\n` }],
        label: 'two pipelined requests',
        method: 'GET',
        mayNotAnswer: false,
      };
    case 16:
      return one(`GET /health HTTP/1.1\nHost: x\n\n`, 'bare LF line ends');
    case 17:
      return { bytes: [{ write: `POST /devices/fuzz-dev-1/backup HTTP/1.1\r\n${host}Content-Length: 100\r\n\r\nFFCE`, delayMs: rng.int(0, 50), destroy: true }], label: 'reset mid-body', method: 'POST', mayNotAnswer: true };
    case 18:
      return { bytes: [{ write: `GET /hea`, delayMs: rng.int(0, 50), end: true }], label: 'request line cut, FIN', method: 'GET', mayNotAnswer: false };
    case 19:
      return one(`PUT /admin/devices/x HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${chunked([Buffer.from('{"public_'), Buffer.from('key":1}')]).toString('latin1')}`, 'chunked admin body', 'PUT');
    case 20:
      return one(`${rng.pick(['FOO', 'get', 'G E T', 'GET\t', 'PRI'])} /health HTTP/1.1\r\n${host}\r\n`, 'odd method');
    default:
      return one(`GET /health HTTP/1.0\r\n\r\n`, 'HTTP/1.0');
  }
}

export function generateCase(ctx: GenContext, index: number): FuzzCase {
  const { rng } = ctx;
  const kind = rng.weighted([
    [5, 'ota'],
    [5, 'backup'],
    [4, 'admin'],
    [2, 'appconfig'],
    [1, 'misc'],
    [4, 'raw'],
  ] as const);
  if (kind === 'raw') {
    const m = malformed(ctx);
    const pipelined = m.label === 'two pipelined requests';
    return { index, kind, label: m.label, steps: m.bytes, methods: pipelined ? ['GET', 'GET'] : [m.method], expectResponses: pipelined ? 2 : 1, mayNotAnswer: m.mayNotAnswer };
  }
  const built = kind === 'ota' ? otaRequest(ctx) : kind === 'backup' ? backupRequest(ctx) : kind === 'admin' ? adminRequest(ctx) : kind === 'appconfig' ? appconfigRequest(ctx) : miscRequest(ctx);
  const { req, label } = mutateRequest(ctx, { method: built.method, path: built.path, headers: [...built.headers, ['Connection', 'close']], ...(built.body ? { body: built.body } : {}) }, built.fixedMethod);
  const framing = rng.weighted([
    [12, 'length'],
    [1, 'chunked'],
    [1, 'split'],
  ] as const);
  let steps: RawStep[];
  if (framing === 'chunked' && req.body) {
    const cut = rng.int(0, req.body.length);
    steps = [{ write: httpRequest(req.method, req.path, [...req.headers, ['Transfer-Encoding', 'chunked']], chunked([req.body.subarray(0, cut), req.body.subarray(cut)].filter((b) => b.length > 0)), { lengthHeader: false }) }];
  } else {
    const bytes = httpRequest(req.method, req.path, req.headers, req.body);
    if (framing === 'split') {
      const cut = rng.int(1, Math.max(1, bytes.length - 1));
      steps = [{ write: bytes.subarray(0, cut), delayMs: rng.int(1, 30) }, { write: bytes.subarray(cut) }];
    } else {
      steps = [{ write: bytes }];
    }
  }
  return { index, kind, label: `${built.label}${label ? ` [${label}]` : ''} ${req.method} ${req.path.slice(0, 120)}`, steps, methods: [req.method], expectResponses: 1, mayNotAnswer: false };
}

// ---------------------------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------------------------

export interface FuzzFailure {
  index: number;
  kind: string;
  label: string;
  problem: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  durationMs: number;
  /** Answers by class: 1xx…5xx, and `none` for exchanges that got no answer. */
  byStatusClass: Record<string, number>;
  byStatus: Record<string, number>;
  byKind: Record<string, number>;
  failures: FuzzFailure[];
  canaryIntact: boolean;
  healthOk: boolean;
}

export interface CloudFuzzOptions {
  /** The cloud, e.g. http://127.0.0.1:8080; or host and port. */
  baseUrl?: string;
  host?: string;
  port?: number;
  /** A super-user JWT for the cloud (admin and appconfig requests, and the canary set-up). */
  adminToken: string;
  /** A valid JWT that is not a super user (optional; a garbage one is used otherwise). */
  nonSuperToken?: string;
  requests: number;
  seed: number | string;
  /** Exchanges in flight at once (default 8); 1 replays in exactly the generated order. */
  concurrency?: number;
  onProgress?: (done: number, total: number, report: FuzzReport) => void;
}

interface Canary {
  device: Device;
  backup: Buffer;
  snapshot: string;
}

async function adminCall(target: RawTarget, token: string, method: string, path: string, body?: unknown): Promise<RawResponse> {
  const headers: [string, string][] = [['Authorization', `Bearer ${token}`], ['Connection', 'close']];
  if (body !== undefined) headers.push(['Content-Type', 'application/json']);
  const res = await rawExchange(target, httpRequest(method, path, headers, body === undefined ? undefined : JSON.stringify(body)), { methods: [method], expectResponses: 1 });
  const r = res.responses[0];
  if (!r) throw new Error(`${method} ${path}: no answer`);
  return r;
}

function signedGet(target: RawTarget, device: Device, path: string, method = 'GET'): Promise<RawResult> {
  const n = Buffer.alloc(32, 0xc4);
  n.writeDoubleBE(Date.now() + Math.random());
  const timestamp = new Date().toISOString();
  const signature = sign('sha256', Buffer.concat([n, Buffer.from(timestamp)]), { key: device.privateKey, dsaEncoding: 'der' });
  return rawExchange(
    target,
    httpRequest(method, path, [
      ['X-Device-UUID', device.uuid],
      ['X-Device-Nonce', n.toString('base64')],
      ['X-Device-Timestamp', timestamp],
      ['X-Device-Signature', signature.toString('base64')],
      ['Connection', 'close'],
    ]),
    { methods: [method], expectResponses: 1 },
  );
}

function newDevice(uuid: string): Device {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { uuid, privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Everything about the canary that must not change, as one string. */
async function canarySnapshot(target: RawTarget, token: string, device: Device): Promise<{ text: string; backup: Buffer }> {
  const backup = await signedGet(target, device, `/devices/${device.uuid}/backup`);
  const b = backup.responses[0];
  if (!b || b.status !== 200) throw new Error(`canary backup GET: ${b?.status ?? 'no answer'} ${b?.body.toString().slice(0, 200) ?? ''}`);
  const dev = await adminCall(target, token, 'GET', `/admin/devices/${device.uuid}`);
  const fw = await adminCall(target, token, 'GET', `/admin/firmware/${CANARY_TRACK.cls}/${CANARY_TRACK.productHex}/${CANARY_TRACK.application}`);
  const ota = await rawExchange(target, httpRequest('GET', `/ota/${CANARY_TRACK.cls}/${CANARY_TRACK.productHex}/${CANARY_TRACK.application}?current_version=2025.01.01`, [['Connection', 'close']]), { expectResponses: 1 });
  const text = JSON.stringify({
    backup_sha256: createHash('sha256').update(b.body).digest('hex'),
    backup_etag: b.headers.etag,
    backup_last_modified: b.headers['last-modified'],
    device: [dev.status, dev.body.toString('utf8')],
    firmware: [fw.status, fw.body.toString('utf8')],
    ota: [ota.responses[0]?.status, ota.responses[0]?.body.toString('utf8')],
  });
  return { text, backup: b.body };
}

async function setUp(target: RawTarget, token: string, rng: Rng): Promise<{ devices: Device[]; canary: Canary }> {
  const devices = [newDevice('fuzz-dev-1'), newDevice('fuzz-dev-2')];
  const canaryDevice = newDevice(`canary-${rng.u32().toString(16)}`);
  for (const d of [...devices, canaryDevice]) {
    const r = await adminCall(target, token, 'PUT', `/admin/devices/${d.uuid}`, { public_key: d.publicKeyPem });
    if (r.status !== 201 && r.status !== 200) throw new Error(`enroll ${d.uuid}: ${r.status} ${r.body.toString()}`);
  }
  const release = await adminCall(target, token, 'PUT', `/admin/firmware/${CANARY_TRACK.cls}/${CANARY_TRACK.productHex}/${CANARY_TRACK.application}/${CANARY_TRACK.version}`, {
    url: 'https://fw.example/canary.bin',
    size: 1_048_576,
    sha256: 'ca'.repeat(32),
  });
  if (release.status !== 201 && release.status !== 409) throw new Error(`canary release: ${release.status} ${release.body.toString()}`);
  // The canary backup: stored once with the canary's own key, which the fuzz never uses.
  const blob = Buffer.concat([Buffer.from('FFCE'), rng.bytes(4092)]);
  const n = rng.bytes(32);
  const timestamp = new Date().toISOString();
  const signature = sign('sha256', Buffer.concat([n, Buffer.from(timestamp)]), { key: canaryDevice.privateKey, dsaEncoding: 'der' });
  const stored = await rawExchange(
    target,
    httpRequest(
      'POST',
      `/devices/${canaryDevice.uuid}/backup`,
      [
        ['X-Device-UUID', canaryDevice.uuid],
        ['X-Device-Nonce', n.toString('base64')],
        ['X-Device-Timestamp', timestamp],
        ['X-Device-Signature', signature.toString('base64')],
        ['Content-Type', 'application/octet-stream'],
        ['ETag', '"' + 'ce'.repeat(32) + '"'],
        ['Connection', 'close'],
      ],
      blob,
    ),
    { methods: ['POST'], expectResponses: 1 },
  );
  if (stored.responses[0]?.status !== 200) throw new Error(`canary backup: ${stored.responses[0]?.status ?? 'no answer'}`);
  const snap = await canarySnapshot(target, token, canaryDevice);
  if (!snap.backup.equals(blob)) throw new Error('canary backup read back differs from what was stored');
  return { devices, canary: { device: canaryDevice, backup: blob, snapshot: snap.text } };
}

function keyMaterial(): GenContext['keys'] {
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    p256: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    pkcs8: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    sec1: ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
    p384: generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    rsa: generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    ed25519: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function classOf(status: number | undefined): string {
  return status === undefined ? 'none' : `${Math.floor(status / 100)}xx`;
}

/** Runs the fuzz and returns the report; it never throws for a finding (see report.failures). */
export async function runCloudFuzz(opts: CloudFuzzOptions): Promise<FuzzReport> {
  const url = opts.baseUrl ? new URL(opts.baseUrl) : undefined;
  const target: RawTarget = { host: opts.host ?? url?.hostname.replace(/^\[|\]$/g, '') ?? '127.0.0.1', port: opts.port ?? Number(url?.port || 80) };
  const seed = seedFrom(opts.seed);
  const rng = new Rng(seed);
  const started = Date.now();
  const report: FuzzReport = { seed, requests: 0, durationMs: 0, byStatusClass: {}, byStatus: {}, byKind: {}, failures: [], canaryIntact: false, healthOk: false };
  const { devices, canary } = await setUp(target, opts.adminToken, rng.fork());
  const ctx: GenContext = {
    rng,
    adminToken: opts.adminToken,
    nonSuperToken: opts.nonSuperToken ?? 'eyJhbGciOiJIUzI1NiJ9.eyJncm91cHMiOltdfQ.c2ln',
    devices,
    canary: canary.device,
    keys: keyMaterial(),
    usedNonces: [],
  };
  const fail = (c: Pick<FuzzCase, 'index' | 'kind' | 'label'>, problem: string) => {
    if (report.failures.length < 100) report.failures.push({ index: c.index, kind: c.kind, label: c.label, problem });
  };

  let next = 0;
  const worker = async () => {
    while (next < opts.requests) {
      const c = generateCase(ctx, next++);
      const result = await rawExchange(target, c.steps, { methods: c.methods, expectResponses: c.expectResponses, timeoutMs: 8000 });
      report.requests++;
      report.byKind[c.kind] = (report.byKind[c.kind] ?? 0) + 1;
      if (result.responses.length === 0) {
        report.byStatusClass.none = (report.byStatusClass.none ?? 0) + 1;
        if (!c.mayNotAnswer) fail(c, result.timedOut ? 'no answer within 8 s' : `connection closed without an answer${result.trailing.length ? `: ${result.trailing.toString('latin1').slice(0, 80)}` : ''}`);
      }
      if (result.responses.length > c.methods.length) fail(c, `${result.responses.length} answers to ${c.methods.length} request(s): ${result.responses.map((r) => r.status).join(', ')}`);
      result.responses.forEach((res, i) => {
        report.byStatusClass[classOf(res.status)] = (report.byStatusClass[classOf(res.status)] ?? 0) + 1;
        report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1;
        const problem = errorShapeProblem(res, c.methods[i] ?? c.methods[0] ?? 'GET');
        if (problem) fail(c, problem);
      });
      if (report.requests % 250 === 0) opts.onProgress?.(report.requests, opts.requests, report);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));

  // After the storm: the canary is untouched and the cloud still answers.
  try {
    const after = await canarySnapshot(target, opts.adminToken, canary.device);
    report.canaryIntact = after.backup.equals(canary.backup) && after.text === canary.snapshot;
    if (!report.canaryIntact) fail({ index: -1, kind: 'canary', label: 'canary' }, `canary changed: before ${canary.snapshot.slice(0, 400)} after ${after.text.slice(0, 400)}`);
  } catch (err) {
    fail({ index: -1, kind: 'canary', label: 'canary' }, `canary unreadable: ${err instanceof Error ? err.message : String(err)}`);
  }
  const health = await rawExchange(target, httpRequest('GET', '/health', [['Connection', 'close']]), { expectResponses: 1 });
  report.healthOk = health.responses[0]?.status === 200;
  if (!report.healthOk) fail({ index: -1, kind: 'health', label: 'GET /health' }, `health answered ${health.responses[0]?.status ?? 'nothing'}`);
  report.durationMs = Date.now() - started;
  opts.onProgress?.(report.requests, opts.requests, report);
  return report;
}

/** One paragraph for a failure message: the seed first, so that the run can be replayed. */
export function formatFuzzReport(report: FuzzReport): string {
  const lines = [
    `cloud fuzz seed=${report.seed} requests=${report.requests} duration=${(report.durationMs / 1000).toFixed(1)}s`,
    `  by status class: ${JSON.stringify(report.byStatusClass)}`,
    `  by status: ${JSON.stringify(report.byStatus)}`,
    `  canary intact: ${report.canaryIntact}, health: ${report.healthOk}`,
  ];
  if (report.failures.length) {
    lines.push(`  ${report.failures.length} failure(s) (replay: npm run fuzz -- --seed ${report.seed} --requests ${report.requests} --concurrency 1):`);
    for (const f of report.failures.slice(0, 20)) lines.push(`    #${f.index} ${f.kind}: ${f.problem} <- ${f.label}`);
  }
  return lines.join('\n');
}
