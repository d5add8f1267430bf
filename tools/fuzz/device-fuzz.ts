// A seeded, bounded fuzz of a board's device-local API on both interfaces: mutated requests of every
// route (with and without a valid visual-token), malformed paths, headers and bodies, and malformed
// HTTP on raw sockets. What must hold: no 5xx but the documented ones, every error a JSON error,
// nothing stored lost or changed (a canary backup and canary records), both interfaces answering at
// the end. The same seed gives the same requests. The SoftAP (and its listener) is up only in
// provisioning mode, which the fuzz itself may turn off (DELETE /api/provisioning): a SoftAP request
// finds it up again, and one the board could not take because another request took the SoftAP down
// meanwhile is counted as softap_down, not as a failure. A board busy with as many connections as it
// takes refuses with 503 and Retry-After, or closes a new connection at once: the fuzz's own reads
// honour Retry-After, and a request closed unanswered is sent once more (closed_then_answered).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_PATHS, recordPattern, recordsPath } from '../../firmware/src/core/api-paths.ts';
import { RECORD_KINDS } from '../../firmware/src/core/records.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { errorShapeProblem, httpRequest, rawExchange, type RawResponse } from './raw-http.ts';
import { Rng } from './rng.ts';

export interface DeviceFuzzTarget {
  urls: { ethernet: string; softap: string };
  /** A valid visual-token: the fuzz must not be able to log itself out of checking the canary. */
  visualToken: string;
  /**
   * Whether the SoftAP's listener is up, how many times provisioning mode (and with it the SoftAP)
   * went on or off, how to bring it up, and how to wait until the board has finished what it is
   * doing (a SoftAP going down closes its connections before it logs so).
   */
  softAp?: { up: () => boolean; changes: () => number; raise: () => Promise<void>; settle: () => Promise<void> };
}

export interface FuzzReport {
  seed: number;
  requests: number;
  byStatus: Record<string, number>;
  /** Each broken rule, with the request that broke it (at most 20 kept). */
  failures: string[];
  seconds: number;
}

/** 5xx the device-local API may answer by design (spec 7, docs/board-http-limits.md). */
const ALLOWED_5XX = new Set(['clock_not_synchronized', 'board_busy']);
const CANARY_UUIDS = { controllers: ['canary-ctl-1'], clients: ['canary-cli-1', 'canary-cli-2'] } as const;
const CANARY_BACKUP = JSON.stringify({ canary: true, outputs: Array.from({ length: 50 }, (_, i) => ({ id: i, name: `Out ${i}` })) });

const P = API_PATHS;
const ROUTES: [string, string][] = [
  ['POST', P.login],
  ['GET', P.status],
  ['HEAD', P.backup],
  ['GET', P.backup],
  ['PUT', P.backup],
  ['DELETE', P.backup],
  ['POST', P.cloudBackup],
  ['GET', P.cloudBackup],
  ['DELETE', P.cloudBackup],
  ['GET', P.cloud],
  ['PUT', P.cloud],
  ['PUT', P.provisioning],
  ['GET', P.provisioning],
  ['DELETE', P.provisioning],
  ['POST', P.provisioningToken],
  ...RECORD_KINDS.flatMap((kind): [string, string][] => [
    ['GET', recordsPath(kind)],
    ['GET', recordPattern(kind)],
    ['PUT', recordPattern(kind)],
    ['DELETE', recordPattern(kind)],
  ]),
];
const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'FOO'];
/** Requests with a valid visual-token that may change state touch only these (the canary stays). */
const SAFE_WRITES = new Set([
  ...RECORD_KINDS.flatMap((kind) => [`PUT ${recordPattern(kind)}`, `DELETE ${recordPattern(kind)}`]),
  ...[`POST ${P.login}`, `POST ${P.provisioningToken}`, `POST ${P.cloudBackup}`, `GET ${P.cloudBackup}`, `DELETE ${P.cloudBackup}`, `PUT ${P.provisioning}`, `DELETE ${P.provisioning}`],
]);

const UUID_MUTATIONS = ['fz-1', 'fz-2', '.', '..', '%2e', '%2e%2e', '%252e%252e', 'a%2fb', '%00', 'x'.repeat(65), 'fz-%ZZ', '%', 'fz%20a', 'é', '%C3%A9', '~', 'con', 'fz-1.tmp', 'fz-1.etag', '.tmp', 'canary-ctl-1%00'];

function uuidFor(rng: Rng): string {
  return rng.chance(0.4) ? `fz-${rng.int(0, 4)}` : rng.pick(UUID_MUTATIONS);
}

function mac(rng: Rng): string {
  return Array.from({ length: 6 }, () => rng.int(0, 255).toString(16).padStart(2, '0').toUpperCase()).join(':');
}

function jsonBody(rng: Rng, kind: string): string {
  const variants: (() => string)[] = [
    () => JSON.stringify(kind === 'clients' ? { mac: mac(rng), wifi: { ssid: 'site', password: 'secret-pw' }, mqtt: { host: '127.0.0.1', port: 1883 }, ...(rng.chance(0.7) ? { ca_certificate: TEST_CA_PEM } : {}) } : { ethernet_mac: mac(rng), name: 'fz' }),
    () => JSON.stringify({ password: rng.pick(['', 'wrong', 'x'.repeat(2000), 42, null]) }),
    () => JSON.stringify({ uuid: uuidFor(rng), mac: rng.chance(0.5) ? mac(rng) : 'zz' }),
    () => JSON.stringify({ url: rng.pick(['http://127.0.0.1:1', 'ftp://x', '', null, 'http://' + 'a'.repeat(600)]) }),
    () => '['.repeat(rng.int(0, 4999)),
    () => '{"a":'.repeat(rng.int(0, 199)) + '1' + '}'.repeat(rng.int(0, 199)),
    () => '{"a": 1e999999, "b": -0, "c": "\\ud800"}',
    () => '{"truncated": ',
    () => String.fromCharCode(...Array.from({ length: rng.int(0, 299) }, () => rng.int(0, 255))),
    () => '',
    () => 'null',
    () => JSON.stringify('x'.repeat(rng.int(0, 19_999))),
  ];
  return rng.pick(variants)();
}

function mutatePath(rng: Rng, pattern: string): string {
  let path = pattern.replace('{uuid}', uuidFor(rng));
  const r = rng.int(0, 9);
  if (r === 0) path = path.replace(/\//g, () => rng.pick(['/', '//', '/./', '/%2f']));
  else if (r === 1) path += rng.pick(['/', '/x', '?', '?a=1&a=2', '?%zz', '#frag', '/..', '%']);
  else if (r === 2) path = path.toUpperCase();
  else if (r === 3) path = '/' + 'a/'.repeat(rng.int(0, 299));
  return path;
}

interface Planned {
  describe: string;
  raw?: Buffer;
  /** Raw requests: FIN after the bytes. */
  end?: boolean;
  iface: 'ethernet' | 'softap';
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The request carries the valid visual-token. */
  authorized: boolean;
}

/** Raw requests no HTTP client would send. */
function rawRequestBytes(rng: Rng): Buffer {
  const lines = [
    'GET http://[/ HTTP/1.1\r\nHost: b\r\n\r\n',
    'GET http://x:99999/backup HTTP/1.1\r\nHost: b\r\n\r\n',
    `GET /${'%'.repeat(rng.int(0, 49))} HTTP/1.1\r\nHost: b\r\n\r\n`,
    'GET / HTTP/9.9\r\n\r\n',
    'GET /backup HTTP/1.1\r\nHost: b\r\nX: a\rb\r\n\r\n',
    'POST /api/login HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'POST /api/login HTTP/1.1\r\nHost: b\r\nContent-Length: 50\r\n\r\n{"pa',
    'POST /api/login HTTP/1.1\r\nHost: b\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{"a":1}',
    'POST /api/login HTTP/1.1\r\nHost: b\r\nContent-Length: -1\r\n\r\n',
    'PUT /backup HTTP/1.1\r\nHost: b\r\nExpect: 100-continue\r\nContent-Length: 99999999\r\n\r\n',
    `GET /backup HTTP/1.1\r\nHost: b\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`,
    '\r\n\r\n\r\n',
    String.fromCharCode(...Array.from({ length: 1 + rng.int(0, 199) }, () => rng.int(0, 255))),
    `GET /backup HTTP/1.1\r\nHost: b\r\n${Array.from({ length: 200 }, (_, i) => `h${i}: v`).join('\r\n')}\r\n\r\n`,
  ];
  return Buffer.from(rng.pick(lines), 'latin1');
}

function plan(rng: Rng, token: string): Planned {
  const iface = rng.chance(0.5) ? 'ethernet' : 'softap';
  if (rng.chance(0.12)) {
    return { describe: 'raw', raw: rawRequestBytes(rng), end: rng.chance(0.5), iface, method: '', path: '', headers: {}, authorized: false };
  }
  const [routeMethod, pattern] = rng.pick(ROUTES);
  const method = rng.chance(0.85) ? routeMethod : rng.pick(METHODS);
  const headers: Record<string, string> = {};
  const auth = rng.int(0, 5);
  let authorized = false;
  if (auth <= 2 && (method === 'GET' || method === 'HEAD' || SAFE_WRITES.has(`${method} ${pattern}`))) {
    headers['visual-token'] = token;
    authorized = true;
  } else if (auth === 3) headers['visual-token'] = rng.pick(['', 'x', token.slice(0, -1) + (token.endsWith('0') ? '1' : '0'), token.toUpperCase() === token ? 'zz' : token.toUpperCase()]);
  else if (auth === 4) headers['provisioning-token'] = rng.pick(['', 'x'.repeat(64), token]);
  if (rng.chance(0.3)) headers['content-type'] = rng.pick(['application/json', 'text/plain', 'application/octet-stream', '']);
  if (rng.chance(0.1)) headers['if-none-match'] = rng.pick(['*', '"abc"', 'W/"x", "y"', '']);
  const kind = pattern.includes('clients') ? 'clients' : 'controllers';
  const path = mutatePath(rng, pattern);
  // A valid token writes only to the fuzz's own records: a mutated path could name a canary.
  if (authorized && method !== 'GET' && method !== 'HEAD' && /canary/.test(path)) delete headers['visual-token'];
  const body = method === 'GET' || method === 'HEAD' ? undefined : pattern === P.backup && !authorized ? 'x'.repeat(rng.int(0, 69_999)) : jsonBody(rng, kind);
  return { describe: `${method} ${path}`, iface, method, path, headers, ...(body !== undefined ? { body } : {}), authorized: 'visual-token' in headers && headers['visual-token'] === token };
}

/** Why an answer breaks the contract: the shared error shape, and no 5xx but the documented ones. */
function answerProblem(res: RawResponse, method: string): string | undefined {
  // A HEAD answer has no body to name its code: a 503 with Retry-After is the board's busy refusal
  // (board_busy, docs/board-http-limits.md), the one 503 that says when to come back.
  if (method === 'HEAD' && res.status === 503 && res.headers['retry-after'] !== undefined) return undefined;
  if (res.status >= 500) {
    const code = (() => {
      try {
        return (JSON.parse(res.body.toString('utf8')) as { error?: unknown }).error;
      } catch {
        return undefined;
      }
    })();
    if (typeof code === 'string' && ALLOWED_5XX.has(code)) return errorShapeProblem({ ...res, status: 400 }, method);
  }
  const problem = errorShapeProblem(res, method);
  if (problem) return problem;
  // What XS and the SDK's natives say of a fault (an exception's name, xsUnknownError's words, an abort).
  if (/stack overflow|memory full|XS abort|file not found|TypeError|RangeError|ReferenceError|SyntaxError|HostError|\(host\)/.test(res.body.toString('utf8'))) return `internal text reached the client: ${res.body.toString('utf8').slice(0, 120)}`;
  return undefined;
}

/** How many times a request the board refused as busy is sent again, a Retry-After (at most a second) apart. */
const BUSY_RETRIES = 20;

/**
 * fetch, sent again while the board says it is busy (503 with Retry-After) or closed the connection
 * at once (it holds as many connections as lwIP has PCBs: docs/board-http-limits.md), as a client that
 * honours Retry-After does. A board starved of CPU sees its clients' closes late, and refuses meanwhile.
 */
async function fetchWhenFree(url: string, init: RequestInit = {}): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    let res: Response | undefined;
    try {
      res = await fetch(url, init);
    } catch (err) {
      if (attempt >= BUSY_RETRIES) throw err;
    }
    if (res && !(res.status === 503 && res.headers.has('retry-after'))) return res;
    if (res && attempt >= BUSY_RETRIES) return res;
    await res?.arrayBuffer();
    await new Promise((r) => setTimeout(r, Math.min(1000, Number(res?.headers.get('retry-after') ?? 1) * 1000)));
  }
}

/** Stores the canary (a backup and records) the fuzz must not change. */
export async function seedCanary(t: DeviceFuzzTarget): Promise<void> {
  const h = { 'visual-token': t.visualToken, 'content-type': 'application/json' };
  const put = await fetch(`${t.urls.ethernet}/backup`, { method: 'PUT', headers: h, body: CANARY_BACKUP });
  if (put.status !== 200) throw new Error(`canary backup: ${put.status} ${await put.text()}`);
  for (const uuid of CANARY_UUIDS.controllers) {
    const r = await fetch(`${t.urls.ethernet}/api/controllers/${uuid}`, { method: 'PUT', headers: h, body: JSON.stringify({ ethernet_mac: '24:0A:C4:E0:AA:01', name: uuid }) });
    if (r.status >= 300) throw new Error(`canary controller: ${r.status} ${await r.text()}`);
  }
  for (const [i, uuid] of CANARY_UUIDS.clients.entries()) {
    const record = { mac: `24:0A:C4:10:AA:0${i}`, wifi: { ssid: 'Site', password: 'site-password' }, mqtt: { host: '127.0.0.1', port: 1883, username: uuid, password: 'mqtt-pw' }, ca_certificate: TEST_CA_PEM };
    const r = await fetch(`${t.urls.ethernet}/api/clients/${uuid}`, { method: 'PUT', headers: h, body: JSON.stringify(record) });
    if (r.status >= 300) throw new Error(`canary client: ${r.status} ${await r.text()}`);
  }
}

/** What the canary looks like now: the backup with its ETag, and each canary record. */
export async function readCanary(t: DeviceFuzzTarget): Promise<string> {
  const h = { 'visual-token': t.visualToken };
  const parts: string[] = [];
  const backup = await fetchWhenFree(`${t.urls.ethernet}/backup`, { headers: h });
  parts.push(`backup ${backup.status} ${backup.headers.get('etag')} ${await backup.text()}`);
  for (const kind of ['controllers', 'clients'] as const) {
    for (const uuid of CANARY_UUIDS[kind]) {
      const r = await fetchWhenFree(`${t.urls.ethernet}/api/${kind}/${uuid}`, { headers: h });
      parts.push(`${kind}/${uuid} ${r.status} ${await r.text()}`);
    }
  }
  return parts.join('\n');
}

export async function runDeviceFuzz(t: DeviceFuzzTarget, o: { requests: number; seed: number; concurrency?: number; onProgress?: (done: number) => void }): Promise<FuzzReport> {
  const started = Date.now();
  const rng = new Rng(o.seed);
  const failures: string[] = [];
  const byStatus: Record<string, number> = {};
  const count = (k: string) => (byStatus[k] = (byStatus[k] ?? 0) + 1);
  const before = await readCanary(t);
  const planned = Array.from({ length: o.requests }, () => plan(rng, t.visualToken));
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < planned.length) {
      const p = planned[next++]!;
      const base = t.urls[p.iface];
      const what = `request ${next} (seed ${o.seed}) ${p.iface} ${p.describe}`;
      const changes = () => t.softAp?.changes() ?? 0;
      let changesBefore = changes();
      // The SoftAP went down during the exchange (and may be up again).
      const softApDown = () => p.iface === 'softap' && t.softAp !== undefined && (!t.softAp.up() || changes() !== changesBefore);
      try {
        if (p.iface === 'softap' && t.softAp && !t.softAp.up()) await t.softAp.raise();
        changesBefore = changes();
        const { hostname, port } = new URL(base);
        // Without FIN, a request that waits for more (a body cut short) is given up after a second, as
        // an impatient client would. Node drops the answer to a whole request followed by FIN (it
        // keeps no half-open connections), so some raw requests end with no answer, by design.
        const raw = p.raw ?? httpRequest(p.method, p.path, Object.entries(p.headers), p.body);
        const exchange = () =>
          rawExchange({ host: hostname, port: Number(port) }, p.raw ? [{ write: raw, ...(p.end ? { end: true } : {}) }] : raw, {
            methods: [p.raw ? 'GET' : p.method],
            expectResponses: 1,
            timeoutMs: p.raw && !p.end ? 1000 : 20_000,
          });
        let result = await exchange();
        if (!result.responses[0] && !p.raw && !softApDown()) {
          // Closed with no answer: a board that holds as many connections as it has PCBs closes a new
          // one at once (docs/board-http-limits.md), and one starved of CPU sees closes late. A client
          // sends it again once the board has come round; no answer then is a failure.
          await t.softAp?.settle();
          if (!softApDown()) {
            result = await exchange();
            if (result.responses[0]) count('closed_then_answered');
          }
        }
        const res = result.responses[0];
        if (!res && p.iface === 'softap') await t.softAp?.settle();
        if (!res && softApDown()) {
          count('softap_down');
          o.onProgress?.(++done);
          continue;
        }
        count(res ? String(res.status) : 'closed');
        const problem = res && answerProblem(res, p.raw ? 'GET' : p.method);
        if (problem && failures.length < 20) failures.push(`${what}: ${problem}`);
        if (!res && !p.raw && failures.length < 20) failures.push(`${what}: no answer${result.timedOut ? ' within 20 s' : ''}`);
      } catch (err) {
        if (p.iface === 'softap') await t.softAp?.settle();
        if (softApDown()) count('softap_down');
        else if (failures.length < 20) failures.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      }
      o.onProgress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 4 }, worker));
  if (t.softAp && !t.softAp.up()) await t.softAp.raise();
  for (const iface of ['ethernet', 'softap'] as const) {
    const r = await fetchWhenFree(`${t.urls[iface]}/backup`, { headers: { 'visual-token': t.visualToken } }).catch(() => null);
    if (r?.status !== 200) failures.push(`after the fuzz, ${iface} does not answer GET /backup with 200 (${r?.status ?? 'no answer'})`);
  }
  const after = await readCanary(t);
  if (after !== before) failures.push(`the canary changed (seed ${o.seed}):\nbefore ${before.slice(0, 300)}\nafter  ${after.slice(0, 300)}`);
  return { seed: o.seed, requests: o.requests, byStatus, failures, seconds: (Date.now() - started) / 1000 };
}

/** How many times provisioning mode went on or off (core/provisioning/mode.ts logs each). */
function modeChanges(board: SdkBoard): number {
  return board.events.filter((e) => e.source === 'provisioning' && /^provisioning mode (on|off)\b/.test(e.message)).length;
}

/**
 * A virtual controller (the SDK's host build of the production firmware: SdkBoard) with a flash of its
 * own, logged in, its canary stored: what `npm run fuzz` and the test use.
 */
export async function startFuzzBoard(): Promise<{ board: SdkBoard; target: DeviceFuzzTarget; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'device-fuzz-'));
  const password = 'fuzz-admin-password';
  const identity: DeviceIdentity = {
    uuid: 'ctl-fuzz-0001',
    role: 'controller',
    ethernetMac: '24:0A:C4:E0:00:F1',
    wifiMac: '24:0A:C4:10:00:F1',
    hardwareClass: 'ctl-s3',
    productHex: '0x00c0ffee',
    firmwareVersion: '2026.01.01',
    build: 'production',
  };
  const board = await startSdkBoard({ identity, fuseKeyHex: 'f1'.repeat(32), flashDir: join(dir, 'flash'), adminPassword: password, panel: false });
  const login = await fetch(`${board.urls.ethernet}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });
  const token = ((await login.json()) as { token: string }).token;
  const raise = async () => {
    const r = await fetchWhenFree(`${board.urls.ethernet}/api/provisioning`, { method: 'PUT', headers: { 'visual-token': token } });
    if (r.status !== 200) {
      const resets = board.reboots.length > 0 ? `; the board reset: ${board.reboots.join(', ')}` : '';
      throw new Error(`provisioning mode (the SoftAP): ${r.status} ${await r.text()}${resets}`);
    }
    for (let i = 0; i < 500 && !board.listening('softap'); i++) await new Promise((res) => setTimeout(res, 10));
  };
  await raise();
  // Settled: a reset under way has ended and the firmware's main loop has come round to the heap
  // probe, so what it was doing when the probe was sent (a SoftAP going down) is done.
  const settle = async () => {
    await board.settled();
    await board.heap().catch(() => undefined);
  };
  const target: DeviceFuzzTarget = { urls: { ethernet: board.urls.ethernet!, softap: board.urls.softap! }, visualToken: token, softAp: { up: () => board.listening('softap'), changes: () => modeChanges(board), raise, settle } };
  await seedCanary(target);
  return {
    board,
    target,
    close: async () => {
      await board.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
