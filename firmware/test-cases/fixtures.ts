// Boards for the portable test cases: controllers and clients on in-memory platforms sharing an air.
import type { BodyReader, ClientRequest, ClientResponse, Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import { concatBytes, utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { Device, type DeviceOptions } from '../src/core/device.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { MemoryAir } from '../src/platform/memory/air.ts';
import { createMemoryBoard, type MemoryBoard } from '../src/platform/memory/board.ts';
import { ManualClock } from '../src/platform/memory/clock.ts';
import type { MemoryStorage } from '../src/platform/memory/storage.ts';

export const ADMIN_PASSWORD = 'correct horse battery';

/** A real self-signed P-256 CA certificate (openssl req -x509), for client configurations. */
export const TEST_CA_PEM = `-----BEGIN CERTIFICATE-----
MIIBhTCCASugAwIBAgIURUQSPrEHxsk0Yf9JwxrXwrC6xVAwCgYIKoZIzj0EAwIw
GDEWMBQGA1UEAwwNRmxlZXQgVGVzdCBDQTAeFw0yNjExMjExMTM0MTNaFw0zNjEx
MTgxMTM0MTNaMBgxFjAUBgNVBAMMDUZsZWV0IFRlc3QgQ0EwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAAR/xPw8VVyxAr4yTADGNHqnX+x7dfZwAtkT+BgOtkz1csFb
82r5UP9DdTh2jvFTbvsEGLq3bpiJUPqPSERGMAOMo1MwUTAdBgNVHQ4EFgQUO4eV
f6oXVmPAJXumuANB18BRJPEwHwYDVR0jBBgwFoAUO4eVf6oXVmPAJXumuANB18BR
JPEwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBcB/v560iIJbOU
Kq7GfOfX2f2LR7Pj+C77erb3gCif5gIhAPPJ4SDr6W2OUWJngWGnCNota3pLQitz
eaT9rtzpG4Kh
-----END CERTIFICATE-----
`;

/** A valid client configuration (docs/firmware-records.md) for a client MAC. */
export function clientConfig(mac: string): Record<string, unknown> {
  return { mac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: 'broker.local', port: 8883 }, ca_certificate: TEST_CA_PEM };
}
export const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

export interface Bench {
  air: MemoryAir;
  clock: ManualClock;
}

export function bench(): Bench {
  return { air: new MemoryAir(), clock: new ManualClock(T0) };
}

export interface TestBoard extends MemoryBoard {
  device: Device;
  identity: DeviceIdentity;
}

let counter = 0;

export function mac(n: number, prefix = '24:0A:C4:00'): string {
  return `${prefix}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`.toUpperCase();
}

export function board(
  b: Bench,
  o: {
    role: 'controller' | 'client';
    uuid?: string;
    fuseKeyHex?: string;
    storage?: MemoryStorage;
    internet?: (r: ClientRequest) => Promise<ClientResponse>;
    brokers?: Set<string>;
    device?: DeviceOptions;
    firmwareVersion?: string;
    /** A debug build (spec 8: 30-minute provisioning mode and tokens). */
    debug?: boolean;
  },
): TestBoard {
  const n = ++counter;
  const identity: DeviceIdentity = {
    uuid: o.uuid ?? `${o.role}-${n}`,
    role: o.role,
    wifiMac: mac(n * 4, '24:0A:C4:10'),
    ...(o.role === 'controller' ? { ethernetMac: mac(n * 4, '24:0A:C4:E0') } : {}),
    hardwareClass: o.role === 'controller' ? 'ctl-s3' : 'lamp-c3',
    productHex: '0x00c0ffee',
    firmwareVersion: o.firmwareVersion ?? '2026.01.01',
    build: o.debug ? 'debug' : 'production',
  };
  const mb = createMemoryBoard({
    identity,
    fuseKeyHex: o.fuseKeyHex ?? (n.toString(16).padStart(2, '0')).repeat(32),
    air: b.air,
    clock: b.clock,
    seed: n,
    ...(o.storage ? { storage: o.storage } : {}),
    ...(o.internet ? { internet: o.internet } : {}),
    ...(o.brokers ? { brokers: o.brokers } : {}),
  });
  const device = new Device(mb.hal, { initialAdminPassword: ADMIN_PASSWORD, ...o.device });
  const tb = { ...mb, device, identity };
  createdBoards.push(tb);
  return tb;
}

/** Every board made by board() since the last clear: core.test.ts checks their event logs after each case. */
export const createdBoards: TestBoard[] = [];

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  bytes: Uint8Array;
  text: string;
  json: any;
}

export async function readAll(body: BodyReader | Uint8Array | undefined): Promise<Uint8Array> {
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  for (let c = await body.read(); c !== null; c = await body.read()) chunks.push(c);
  return concatBytes(...chunks);
}

/** One request into a board's API, as if it came in on `iface`. */
export async function call(
  tb: TestBoard,
  method: string,
  path: string,
  o: { iface?: Iface; headers?: Record<string, string>; body?: Uint8Array | string | object; stationMac?: string; chunkBytes?: number } = {},
): Promise<CallResult> {
  const raw = o.body === undefined ? new Uint8Array(0) : o.body instanceof Uint8Array ? o.body : utf8Encode(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
  const headers: Record<string, string> = { 'content-length': String(raw.length), ...o.headers };
  const res = await tb.device.handle({
    method,
    path,
    query: {},
    headers,
    iface: o.iface ?? 'ethernet',
    ...(o.stationMac ? { stationMac: o.stationMac } : {}),
    body: bytesReader(raw, o.chunkBytes ?? 1024),
  });
  const bytes = await readAll(res.body);
  let text = '';
  let json: unknown;
  try {
    text = utf8Decode(bytes);
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, text, json };
}

export async function login(tb: TestBoard): Promise<Record<string, string>> {
  const r = await call(tb, 'POST', '/api/login', { body: { password: ADMIN_PASSWORD } });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
  return { 'visual-token': r.json.token };
}

/** A source controller with `controllers` controller records (one for the target) and clients. */
export async function seedSource(
  source: TestBoard,
  o: { target?: TestBoard; controllers?: number; clients?: TestBoard[] | number; backup?: string | null },
): Promise<void> {
  const auth = await login(source);
  if (o.target) {
    const r = await call(source, 'PUT', `/api/controllers/${o.target.identity.uuid}`, { headers: auth, body: { name: 'target', ethernet_mac: o.target.identity.ethernetMac } });
    if (r.status !== 201) throw new Error(`seed target: ${r.status} ${r.text}`);
  }
  for (let i = 0; i < (o.controllers ?? 0); i++) {
    await call(source, 'PUT', `/api/controllers/ctl-extra-${i}`, { headers: auth, body: { name: `controller ${i}`, ethernet_mac: mac(1000 + i, '02:00:00:E0') } });
  }
  const clients = typeof o.clients === 'number' ? Array.from({ length: o.clients }, (_, i) => ({ uuid: `client-extra-${i}`, mac: mac(2000 + i, '02:00:00:C0') })) : (o.clients ?? []).map((c) => ({ uuid: c.identity.uuid, mac: c.identity.wifiMac }));
  for (const c of clients) {
    const r = await call(source, 'PUT', `/api/clients/${c.uuid}`, { headers: auth, body: clientConfig(c.mac) });
    if (r.status !== 201) throw new Error(`seed client: ${r.status} ${r.text}`);
  }
  if (o.backup !== undefined && o.backup !== null) {
    const r = await call(source, 'PUT', '/backup', { headers: auth, body: o.backup });
    if (r.status !== 200) throw new Error(`seed backup: ${r.status} ${r.text}`);
  }
}

/** Types a line on the board's serial console and gives its answer line (`OK …` or `ERR …`). */
export async function typeConsole(tb: TestBoard, line: string): Promise<string> {
  const before = tb.consoleOut.length;
  tb.typeLine(line);
  for (let i = 0; i < 50; i++) await Promise.resolve();
  const answer = tb.consoleOut.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR '));
  if (!answer) throw new Error(`no answer to ${line}`);
  return answer;
}
