// The cloud fuzz's request parts: signature headers and bearer tokens (valid mostly, broken now and
// then), JSON bodies (valid now and then, mostly odd), binary body sizes around the route's limit, and
// the generic mutations applied to every request afterwards.
import { gzipSync } from 'node:zlib';
import { JSON_BODY_LIMIT_BYTES } from '../../../cloud/json-body.ts';
import { signDeviceRequest, type DeviceSignatureHeaders } from '../../device-signer.ts';
import { enc, JUNK_SEGMENTS, METHODS, type Built, type Device, type GenContext } from './context.ts';

function nonce(ctx: GenContext): Buffer {
  const { rng } = ctx;
  if (ctx.usedNonces.length > 0 && rng.chance(0.04)) return rng.pick(ctx.usedNonces); // a replay
  const n = rng.bytes(32);
  if (ctx.usedNonces.length < 256) ctx.usedNonces.push(n);
  return n;
}

/** The four signature headers in the order and spelling a device sends them. */
export function signatureHeaderList(h: DeviceSignatureHeaders): [string, string][] {
  return [
    ['X-Device-UUID', h['x-device-uuid']],
    ['X-Device-Nonce', h['x-device-nonce']],
    ['X-Device-Timestamp', h['x-device-timestamp']],
    ['X-Device-Signature', h['x-device-signature']],
  ];
}

/** The four signature headers, mutated now and then (each mutation is a 4xx the cloud must name). */
export function signatureHeaders(ctx: GenContext, device: Device, headerUuid = device.uuid): [string, string][] {
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
  const headers = signatureHeaderList(signDeviceRequest(signer.privateKey, headerUuid, { nonce: n, timestamp }));
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

export function ffce(ctx: GenContext, size: number): Buffer {
  return Buffer.concat([Buffer.from('FFCE'), ctx.rng.bytes(Math.max(0, size - 4))]);
}

/** A binary body's size: mostly small, now and then empty-ish, at the route's limit, or one past it. */
export function binarySize(ctx: GenContext, maxBytes: number): number {
  const { rng } = ctx;
  return rng.weighted([
    [20, rng.int(32, 4096)],
    [2, rng.int(0, 31)],
    [1, maxBytes],
    [1, maxBytes + 1],
  ] as const);
}

export function bearer(ctx: GenContext, allowValid = true): [string, string][] {
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

/** A JSON body for the routes that take one: valid now and then, mostly odd. */
export function jsonBody(ctx: GenContext, valid: () => unknown): { body: Buffer; headers: [string, string][] } {
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
      // Just under and just over the cloud's JSON body limit (cloud/json-body.ts).
      return { body: Buffer.from(JSON.stringify({ logging: 'x'.repeat(JSON_BODY_LIMIT_BYTES + rng.pick([-4096, 4096])) })), headers: [ct] };
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

type Outgoing = Omit<Built, 'label' | 'fixedMethod'>;

/** Applies 0 to 2 generic mutations to a request: method, path, query, headers, framing. */
export function mutateRequest(ctx: GenContext, req: Outgoing, fixedMethod = false): { req: Outgoing; label: string } {
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
