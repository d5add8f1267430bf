// A board in XS under hostile or careless clients (issue: no request can stall, freeze or crash a
// board): bodies cut short, clients that leave while queued, malformed targets and heads, deep JSON,
// a slow client holding one interface, and a firmware that dies (the watchdog resets the board).
// The board runs platform/moddable (docs/moddable-emulation.md): what reaches its listeners' code is
// answered with a JSON error; what Moddable's http.js drops before (a request line it cannot parse)
// and a request whose client half-closed are closed without an answer. Afterwards both interfaces
// (Ethernet, and the SoftAP, which is up in provisioning mode) still answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { XsBoard } from '../../firmware/virtual-esp32/xs-board.ts';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.ts';

const PASSWORD = 'bench-admin-password';
const identity: DeviceIdentity = {
  uuid: 'ctl-hard-0001',
  role: 'controller',
  ethernetMac: '24:0A:C4:E0:00:41',
  wifiMac: '24:0A:C4:10:00:41',
  hardwareClass: 'ctl-s3',
  productHex: '0x00c0ffee',
  firmwareVersion: '2026.01.01',
  build: 'production',
};
// Short enough for the slow-client case, long enough for a 512 KB upload on a busy machine.
const BODY_TIMEOUT_MS = 6000;
/** Longer than the test's time-out: only the board's close ends an exchange that gets no answer. */
const NEVER_MS = 60_000;

let dir: string;
let board: XsBoard;
let visual: Record<string, string>;

async function http(method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer; iface?: 'ethernet' | 'softap' } = {}) {
  const res = await fetch(board.urls[o.iface ?? 'ethernet']! + path, { method, headers: o.headers ?? {}, body: o.body });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Both interfaces answer a plain request with the firmware's own JSON. */
async function expectAnswering(): Promise<void> {
  for (const iface of ['ethernet', 'softap'] as const) {
    const r = await http('GET', '/backup', { iface });
    expect(r.status, `${iface} answers`).toBe(401);
    expect(r.json).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  }
}

/** Provisioning mode brings up the SoftAP and its listener (RAM state: again after each reset). */
async function softApUp(): Promise<void> {
  const r = await http('PUT', '/api/provisioning', { headers: visual });
  expect(r.status).toBe(200);
  for (let i = 0; i < 200 && !board.urls.softap; i++) await new Promise((r) => setTimeout(r, 10));
  expect(board.urls.softap, 'the SoftAP listener').toBeDefined();
}

async function login(): Promise<void> {
  const r = await http('POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  expect(r.status).toBe(200);
  visual = { 'visual-token': r.json.token };
}

/** Wraps the engine's issueCommand: `fault` runs when a host answer (e.g. a request's bytes) contains `marker`. */
function injectFault(marker: string, fault: string): Promise<unknown> {
  return board.evaluate(`{
    const inner = globalThis.issueCommand;
    globalThis.issueCommand = (m) => {
      const reply = inner(m);
      if (new TextDecoder().decode(new Uint8Array(reply)).includes(${JSON.stringify(marker)})) { ${fault} }
      return reply;
    };
  }`);
}

function expectJsonError(a: RawAnswer | null, status: number, code?: string): void {
  expect(a, 'an answer').not.toBeNull();
  expect(a!.status).toBe(status);
  expect(a!.headers['content-type']).toMatch(/^application\/json/);
  expect(a!.json).toEqual({ error: code ?? expect.any(String), message: expect.any(String) });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'xs-hard-'));
  board = await XsBoard.start({
    identity,
    fuseKeyHex: '33'.repeat(32),
    flashDir: join(dir, 'flash'),
    adminPassword: PASSWORD,
    // Build-time limits: the manifest's config "http" (mc/config), here as a test build would set them.
    httpLimits: { bodyTimeoutMs: BODY_TIMEOUT_MS, pendingPerInterface: 4 },
    watchdogComputrons: 600_000_000, // a 512 KB upload takes about 270 M
  });
  await login();
  await softApUp();
}, 120_000);
afterAll(async () => {
  await board?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a board under bad clients', () => {
  it('a body cut short by FIN, by RST, or sent chunked freezes nothing', async () => {
    const head = 'POST /api/login HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"pass';
    // lwIP reports the peer's FIN as a disconnect once the bytes before it are read: the board closes.
    const fin = rawRequest(board.urls.ethernet!, head, { end: true, timeoutMs: NEVER_MS });
    expect(await fin.answer).toBeNull();
    const rst = rawRequest(board.urls.softap!, head);
    await new Promise((r) => setTimeout(r, 50));
    rst.socket.resetAndDestroy();
    // A board takes no chunked bodies (http.js has none): 411, before any chunk is read.
    const chunked = rawRequest(board.urls.ethernet!, 'POST /api/login HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
    expectJsonError(await chunked.answer, 411, 'length_required');
    await expectAnswering();
    expect(board.consoleLines.filter((l) => /ERROR/.test(l)), board.consoleLines.slice(-30).join('\n')).toEqual([]);
  });

  it('a client that leaves while queued behind a 512 KB upload freezes nothing', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(500_000) });
    const upload = http('PUT', '/backup', { headers: visual, body: big });
    const queued = rawRequest(board.urls.softap!, 'GET /backup HTTP/1.1\r\nHost: b\r\n\r\n');
    queued.socket.destroy();
    expect((await upload).status).toBe(200);
    await expectAnswering();
  });

  it('answers targets no URL parser takes, instead of dying', async () => {
    // Each target's own answer: an absolute-form target is routed by its path whatever its authority
    // ("[" or a port out of range; the board is the host), so "/" and "/health" are 404 and "/backup"
    // wants its token; a target that is neither absolute nor a path is 400 bad_request_target.
    const expected: Array<[string, number, string]> = [
      ['http://[/', 404, 'route_not_found'],
      ['http://x:99999/backup', 401, 'missing_visual_token'],
      ['*', 400, 'bad_request_target'],
      ['backup', 400, 'bad_request_target'],
      ['http://[/health', 404, 'route_not_found'],
    ];
    const seen: Array<[string, number, string]> = [];
    for (const [target] of expected) {
      const a = await rawRequest(board.urls.ethernet!, `GET ${target} HTTP/1.1\r\nHost: b\r\n\r\n`).answer;
      expect(a, target).not.toBeNull();
      expect(a!.json, target).toMatchObject({ error: expect.any(String), message: expect.any(String) });
      seen.push([target, a!.status, a!.json.error]);
    }
    expect(seen).toEqual(expected);
    // An absolute-form target is routed by its path.
    const abs = await rawRequest(board.urls.ethernet!, `GET http://board.local/backup HTTP/1.1\r\nHost: b\r\n\r\n`).answer;
    expectJsonError(abs, 401);
    await expectAnswering();
  });

  it('refuses heads and targets over the limits, and unknown expectations, with JSON', async () => {
    expectJsonError(await rawRequest(board.urls.ethernet!, `GET /${'a'.repeat(2000)} HTTP/1.1\r\nHost: b\r\n\r\n`).answer, 414, 'uri_too_long');
    expectJsonError(await rawRequest(board.urls.ethernet!, `GET /backup HTTP/1.1\r\nHost: b\r\nX-Big: ${'a'.repeat(10_000)}\r\n\r\n`).answer, 431, 'headers_too_large');
    expectJsonError(await rawRequest(board.urls.ethernet!, 'PUT /backup HTTP/1.1\r\nHost: b\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}').answer, 417, 'expectation_failed');
    expectJsonError(await rawRequest(board.urls.ethernet!, `PUT /backup HTTP/1.1\r\nHost: b\r\nContent-Length: ${2 << 20}\r\n\r\n`).answer, 413, 'body_too_large');
    // A request line http.js cannot parse never reaches the firmware: http.js closes the connection.
    expect(await rawRequest(board.urls.ethernet!, 'GARBAGE\r\n\r\n', { timeoutMs: NEVER_MS }).answer).toBeNull();
    // A header line without a colon reaches the platform's own head parser: JSON.
    expectJsonError(await rawRequest(board.urls.ethernet!, 'GET /backup HTTP/1.1\r\nHost b\r\n\r\n').answer, 400, 'bad_request');
    await expectAnswering();
  });

  it('refuses JSON nested deeper than its limit with 400, and keeps running', async () => {
    const r = await http('PUT', '/api/clients/deep-1', { headers: { ...visual, 'content-type': 'application/json' }, body: '['.repeat(4000) });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: 'json_too_deep', message: expect.stringMatching(/64/), details: { max_depth: 64 } });
    const login = await http('POST', '/api/login', { headers: { 'content-type': 'application/json' }, body: '{"password":' + '['.repeat(900) });
    expect(login.status).toBe(400);
    expect(login.json.error).toBe('json_too_deep');
    expect(board.reboots).toEqual([]);
    await expectAnswering();
  });

  it('a slow client holds only its own request: the other interface answers meanwhile, and the body times out with 408', async () => {
    // Authenticated: the core checks the token before it reads a body, so only such a request waits on one.
    const slow = rawRequest(board.urls.ethernet!, `PUT /backup HTTP/1.1\r\nHost: b\r\nVisual-Token: ${visual['visual-token']}\r\nContent-Length: 100\r\n\r\n{"a":`, { timeoutMs: 30_000 });
    let slowAnswered = false;
    const slowAnswer = slow.answer.then((a) => ((slowAnswered = true), a));
    const other = await http('GET', '/backup', { headers: visual, iface: 'softap' });
    expect(other.status).toBe(200);
    expect(slowAnswered, 'the slow request is still open when the other interface has answered').toBe(false);
    const ethernetMeanwhile = await http('GET', '/backup', { iface: 'ethernet' });
    expect(ethernetMeanwhile.status).toBe(401);
    expectJsonError(await slowAnswer, 408, 'body_timeout');
  });

  it('answers 503 with Retry-After past the pending-request limit on one interface, and serves the other', async () => {
    // Authenticated requests whose bodies never finish (one backup upload at a time: client records).
    const holders = Array.from({ length: 4 }, (_, i) => rawRequest(board.urls.ethernet!, `PUT /api/clients/hold-${i} HTTP/1.1\r\nHost: b\r\nVisual-Token: ${visual['visual-token']}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`, { timeoutMs: 30_000 }));
    await new Promise((r) => setTimeout(r, 200));
    const refused = await rawRequest(board.urls.ethernet!, 'GET /backup HTTP/1.1\r\nHost: b\r\n\r\n').answer;
    expectJsonError(refused, 503, 'board_busy');
    expect(refused!.headers['retry-after']).toBe('1');
    expect((await http('GET', '/backup', { iface: 'softap' })).status).toBe(401);
    for (const h of holders) h.socket.destroy();
    await Promise.all(holders.map((h) => h.answer));
    // The held slots are given back once their clients are gone.
    await expect.poll(async () => (await http('GET', '/backup', { iface: 'ethernet' })).status).toBe(401);
  });
});

describe('a firmware that dies', () => {
  it('is reset by the watchdog: the request gets 503 without internal text, the flash is kept, both interfaces answer again', async () => {
    expect((await http('PUT', '/backup', { headers: visual, body: JSON.stringify({ kept: 'over the reset' }) })).status).toBe(200);
    const before = await http('GET', '/backup', { headers: visual });
    expect(before.status).toBe(200);
    // Fault injection: the firmware overflows XS's native stack once it has read this request's
    // line, the way unbounded JSON nesting once did. The host owns the listening sockets: the open
    // request gets its stand-in's 503, as requests during the restart do.
    await injectFault('/crash-now', "JSON.parse('['.repeat(200000));");
    const crashed = await http('GET', '/crash-now', { headers: visual });
    expect(crashed.status).toBe(503);
    expect(crashed.json).toEqual({ error: 'board_restarting', message: expect.any(String) });
    expect(crashed.text).not.toMatch(/xs worker|stack overflow|exited/);
    expect(crashed.headers.get('retry-after')).toBe('1');
    await board.settled();
    expect(board.reboots).toEqual(['watchdog: stack overflow']);
    expect(board.consoleLines.some((l) => /^HOST firmware fault \(stack overflow\): watchdog reset$/.test(l))).toBe(true);
    // The RAM is new (tokens and provisioning mode are gone), the flash is not.
    expect((await http('GET', '/backup', { headers: visual })).status).toBe(401);
    await login();
    await softApUp();
    const after = await http('GET', '/backup', { headers: visual });
    expect(after.status).toBe(200);
    expect(after.text).toBe(before.text);
    await expectAnswering();
  });

  it('a command stuck in a loop is stopped by the task watchdog and the board resets', async () => {
    await injectFault('/spin-now', 'for (;;) {}');
    const stuck = await http('GET', '/spin-now');
    expect(stuck.status).toBe(503);
    await board.settled();
    expect(board.reboots.at(-1)).toBe('watchdog: too much computation');
    await login();
    await softApUp();
    await expectAnswering();
  });
});
