// A virtual board (the firmware the Moddable SDK builds for the host, SdkBoard) under hostile or
// careless clients (issue: no request can stall, freeze or crash a board): bodies cut short, clients
// that leave while queued, malformed targets and heads, deep JSON, a slow client holding one
// interface, and a firmware that dies (a fault in native code resets the chip; a main loop that stops
// answering is reset by the task watchdog). What reaches the listeners' code is answered with a JSON
// error (a request line nobody can parse included); a request whose client half-closed before its body
// was whole is closed without an answer. Afterwards both interfaces (Ethernet, and the
// SoftAP, which is up in provisioning mode) still answer. The board runs the production build with
// the listener limits it ships with (BOARD_HTTP_LIMITS): no build of its own for this file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { BOARD_HTTP_LIMITS } from '../../firmware/src/platform/moddable/hal/http-limits.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
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
/** The shipped limits (docs/board-http-limits.md): 15 s for a body, 8 requests in progress per interface. */
const BODY_TIMEOUT_MS = BOARD_HTTP_LIMITS.bodyTimeoutMs;
const PENDING_PER_INTERFACE = BOARD_HTTP_LIMITS.pendingPerInterface;
/** Longer than the test's time-out: only the board's close ends an exchange that gets no answer. */
const NEVER_MS = 60_000;

let dir: string;
let board: SdkBoard;
let visual: Record<string, string>;

async function http(method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer; iface?: 'ethernet' | 'softap' } = {}) {
  return answerOf(await fetch(board.urls[o.iface ?? 'ethernet']! + path, { method, headers: o.headers ?? {}, body: o.body }));
}

/** A response read whole: status, headers, text and the JSON it parses to (undefined when it is not JSON). */
async function answerOf(res: Response): Promise<{ status: number; headers: Headers; text: string; json: any }> {
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

/**
 * Fault injection from outside the firmware, as a probe on a chip would do it: a signal to the firmware's
 * process. SIGSEGV is a fault in native code (the loader's panic handler prints a Guru Meditation line
 * and the chip resets); SIGSTOP stops its main loop dead, as a loop that never yields would.
 */
function injectFault(signal: 'SIGSEGV' | 'SIGSTOP'): void {
  const pid = board.firmwarePid;
  expect(pid, 'a running firmware').toBeDefined();
  process.kill(pid!, signal);
}

/**
 * Polls `url` (a listener of the board while it restarts) until something answers; the stand-in's
 * answer while the firmware is gone, or the firmware's own once it is back.
 */
async function firstAnswerDuringRestart(url: string): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      return await answerOf(await fetch(url + '/backup'));
    } catch (err) {
      // Refused or reset while the old firmware goes: nobody listens for that moment.
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

function expectJsonError(a: RawAnswer | null, status: number, code?: string): void {
  expect(a, 'an answer').not.toBeNull();
  expect(a!.status).toBe(status);
  expect(a!.headers['content-type']).toMatch(/^application\/json/);
  expect(a!.json).toEqual({ error: code ?? expect.any(String), message: expect.any(String) });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-hard-'));
  board = await startSdkBoard({
    identity,
    fuseKeyHex: '33'.repeat(32),
    flashDir: join(dir, 'flash'),
    adminPassword: PASSWORD,
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
    // A board takes no chunked bodies: 411, before any chunk is read.
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
    // The listener reads its own request line (not http.js, which dropped what it could not parse): JSON.
    expectJsonError(await rawRequest(board.urls.ethernet!, 'GARBAGE\r\n\r\n').answer, 400, 'bad_request');
    // A header line without a colon reaches the platform's own head parser: JSON.
    expectJsonError(await rawRequest(board.urls.ethernet!, 'GET /backup HTTP/1.1\r\nHost b\r\n\r\n').answer, 400, 'bad_request');
    // A NUL byte in a header value: 400 at once, not the head time-out (10 s) with a pending slot held.
    expectJsonError(await rawRequest(board.urls.ethernet!, 'GET /backup HTTP/1.1\r\nX-A: a\u0000b\r\nHost: b\r\n\r\n', { timeoutMs: 5000 }).answer, 400, 'bad_request');
    // A malformed Content-Length, the client closing its side as it sends: the refusal arrives whole.
    for (const length of ['+5', 'abc', '5, 5']) {
      const a = await rawRequest(board.urls.ethernet!, `PUT /backup HTTP/1.1\r\nHost: b\r\nContent-Length: ${length}\r\n\r\n`, { end: true }).answer;
      expectJsonError(a, 400, 'bad_request');
      expect(a!.body.length, length).toBe(Number(a!.headers['content-length']));
    }
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

  it('a slow client holds only its own request: the other interface answers meanwhile, and the body times out with 408', { timeout: 60_000 }, async () => {
    // Authenticated: the core checks the token before it reads a body, so only such a request waits on one.
    const slow = rawRequest(board.urls.ethernet!, `PUT /backup HTTP/1.1\r\nHost: b\r\nVisual-Token: ${visual['visual-token']}\r\nContent-Length: 100\r\n\r\n{"a":`, { timeoutMs: BODY_TIMEOUT_MS + 30_000 });
    let slowAnswered = false;
    const slowAnswer = slow.answer.then((a) => ((slowAnswered = true), a));
    const other = await http('GET', '/backup', { headers: visual, iface: 'softap' });
    expect(other.status).toBe(200);
    expect(slowAnswered, 'the slow request is still open when the other interface has answered').toBe(false);
    const ethernetMeanwhile = await http('GET', '/backup', { iface: 'ethernet' });
    expect(ethernetMeanwhile.status).toBe(401);
    expectJsonError(await slowAnswer, 408, 'body_timeout');
  });

  it('answers 503 with Retry-After past the pending-request limit on one interface, and serves the other', { timeout: 60_000 }, async () => {
    // Authenticated requests whose bodies never finish (one backup upload at a time: client records).
    const holders = Array.from({ length: PENDING_PER_INTERFACE }, (_, i) => rawRequest(board.urls.ethernet!, `PUT /api/clients/hold-${i} HTTP/1.1\r\nHost: b\r\nVisual-Token: ${visual['visual-token']}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`, { timeoutMs: 30_000 }));
    // The holders reach the firmware in their own time (a loaded machine can take longer than any fixed
    // wait): ask until the interface is full. A request asked before that is answered (401) and holds nothing.
    let refused: RawAnswer | null = null;
    for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      refused = await rawRequest(board.urls.ethernet!, 'GET /backup HTTP/1.1\r\nHost: b\r\n\r\n').answer;
      if (refused?.status !== 401) break;
    }
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
  // The firmware's process owns its listening sockets, as lwIP does on a chip: a request open when it
  // dies loses its connection without an answer; while the chip restarts, the board's stand-in
  // answers 503 board_restarting on each port (firmware/virtual-esp32/network.ts).
  it('a fault resets the chip: the open request loses its connection, requests meanwhile get 503 without internal text, the flash is kept, both interfaces answer again', { timeout: 90_000 }, async () => {
    expect((await http('PUT', '/backup', { headers: visual, body: JSON.stringify({ kept: 'over the reset' }) })).status).toBe(200);
    const before = await http('GET', '/backup', { headers: visual });
    expect(before.status).toBe(200);
    const ethernet = board.urls.ethernet!;
    // A request in progress (its body not sent yet) when the firmware faults.
    const open = rawRequest(ethernet, `PUT /backup HTTP/1.1\r\nHost: b\r\nVisual-Token: ${visual['visual-token']}\r\nContent-Length: 100\r\n\r\n{"a":`, { timeoutMs: NEVER_MS });
    await new Promise((r) => setTimeout(r, 200));
    // Fault injection (xsnap's evaluate, which made the old engine overflow its stack, is gone): the
    // firmware's process takes a SIGSEGV, a fault in native code; the chip panics and resets.
    injectFault('SIGSEGV');
    expect(await open.answer, 'no answer on a connection the fault cut').toBeNull();
    const meanwhile = await firstAnswerDuringRestart(ethernet);
    expect(meanwhile.status).toBe(503);
    expect(meanwhile.json).toEqual({ error: 'board_restarting', message: expect.any(String) });
    expect(meanwhile.text).not.toMatch(/signal|segmentation|guru|panic|abort/i);
    expect(meanwhile.headers.get('retry-after')).toBe('1');
    await board.settled();
    expect(board.reboots).toEqual(['panic: signal 11 (Segmentation fault)']);
    expect(board.consoleLines).toContain('HOST firmware fault (signal 11 (Segmentation fault)): reset');
    expect(board.consoleLines.some((l) => /^Guru Meditation Error: signal 11/.test(l.replace(/^XS /, '')))).toBe(true);
    expect(board.consoleLines).toContain('rst:0x3 (RTC_SW_SYS_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)');
    // The listener is back on the same port; the RAM is new (tokens and provisioning mode are gone), the flash is not.
    expect(board.urls.ethernet).toBe(ethernet);
    expect((await http('GET', '/backup', { headers: visual })).status).toBe(401);
    await login();
    await softApUp();
    const after = await http('GET', '/backup', { headers: visual });
    expect(after.status).toBe(200);
    expect(after.text).toBe(before.text);
    await expectAnswering();
  });

  it('a main loop that stops answering is reset by the task watchdog, and the board comes back', { timeout: 90_000 }, async () => {
    const ethernet = board.urls.ethernet!;
    // The old engine's computron meter stopped a JavaScript loop; the chip's task watchdog sees a main
    // loop that does not answer its ping (5 s). SIGSTOP stops the loop as a loop that never yields would.
    injectFault('SIGSTOP');
    const stuck = rawRequest(ethernet, 'GET /backup HTTP/1.1\r\nHost: b\r\n\r\n', { timeoutMs: NEVER_MS });
    await expect.poll(() => board.reboots.at(-1), { timeout: 30_000 }).toBe('watchdog: the main loop did not answer');
    expect(await stuck.answer, 'no answer from a stuck firmware').toBeNull();
    await board.settled();
    expect(board.consoleLines).toContain('HOST firmware fault (task watchdog: no answer for 5 s): reset');
    expect(board.consoleLines).toContain('rst:0x7 (TG0WDT_SYS_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)');
    expect(board.urls.ethernet).toBe(ethernet);
    await login();
    await softApUp();
    await expectAnswering();
  });
});
