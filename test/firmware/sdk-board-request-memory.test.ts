// No client can take a board down before it has logged in (issue 32): every byte a request makes the
// board hold comes out of one request memory shared by both interfaces (core/http/request-memory.ts),
// taken by the listeners for each connection and its head, by the core for the bodies it reads whole;
// past it, 503 board_busy with Retry-After. A virtual controller (the SDK's host build, the esp32s3's
// heaps) in provisioning mode is attacked on both interfaces at once with unfinished heads of the
// largest size allowed, beside 16 KB record bodies from a logged-in client and a provisioning target
// copying its records and a 512 KB backup: it answers throughout, never resets, its heaps stay within
// the limits the heap budget holds every board to, and the target's procedure succeeds.
// (Before: six such heads per interface aborted XS with "memory full" within 1.5 s.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_MEMORY_BYTES } from '../../firmware/src/core/http/request-memory.ts';
import { BOARD_HTTP_LIMITS } from '../../firmware/src/platform/moddable/hal/http-limits.ts';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { type HeapFigures, SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { backupOfSize, boardApi, controllerIdentity } from '../../tools/bench/firmware-bench-lib.ts';
import { rawRequest, type RawExchange } from '../helpers/raw-http.ts';
import { ATTACKED_SLOT_LIMIT, LIVE_CHUNK_LIMIT } from './fixtures/heap-limits.ts';

const PASSWORD = 'request-memory-password';
const SAMPLE_MS = 10;
const identity = (n: number) => controllerIdentity(n, 'mem-ctl');
/** A head as large as a board takes, in lines as long as it takes, that never ends. */
const UNFINISHED_HEAD = (() => {
  let head = 'GET /backup HTTP/1.1\r\nHost: board\r\n';
  const line = (i: number) => `X-Pad-${i}: ${'a'.repeat(BOARD_HTTP_LIMITS.headerLineBytes - 20)}\r\n`;
  for (let i = 0; head.length + line(i).length < BOARD_HTTP_LIMITS.headBytes - 64; i++) head += line(i);
  return head;
})();

let dir: string;
const boards: SdkBoard[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'request-memory-'));
});
afterAll(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('a board attacked before log-in on both interfaces at once', () => {
  it('answers, never resets, stays within its heaps, and a provisioning target still gets everything', { timeout: 240_000 }, async () => {
    const air = new VirtualAir();
    const samples: HeapFigures[] = [];
    const source = await startSdkBoard({ identity: identity(1), fuseKeyHex: '41'.repeat(32), flashDir: join(dir, 'source'), adminPassword: PASSWORD, air, heapSampleMs: SAMPLE_MS, onHeapSample: (f) => samples.push({ ...f }) });
    boards.push(source);
    const auth = { 'visual-token': (await boardApi(source, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
    await boardApi(source, 'PUT', '/api/controllers/mem-ctl-2', auth, JSON.stringify({ ethernet_mac: identity(2).ethernetMac, name: 'target' }));
    for (let i = 0; i < 8; i++) {
      await boardApi(source, 'PUT', `/api/clients/lamp-${i}`, auth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
    }
    await boardApi(source, 'PUT', '/backup', auth, backupOfSize(524_256));
    await boardApi(source, 'PUT', '/api/provisioning', auth);
    for (let i = 0; i < 200 && !source.urls.softap; i++) await new Promise((r) => setTimeout(r, 10));
    expect(source.urls.softap, 'the SoftAP listener').toBeDefined();
    const quiet = { chunkBytes: Math.max(...samples.map((s) => s.chunkBytes)), slots: Math.max(...samples.map((s) => s.slots)) };
    const fromSamples = samples.length;

    // The attack: more connections than an interface serves and refuses together, each with the
    // largest unfinished head.
    const attackers: RawExchange[] = [];
    for (const url of [source.urls.ethernet!, source.urls.softap!]) {
      for (let i = 0; i < BOARD_HTTP_LIMITS.pendingPerInterface * 2 + 4; i++) attackers.push(rawRequest(url, UNFINISHED_HEAD, { timeoutMs: 60_000 }));
    }
    // Beside it: 15 KB record bodies from a logged-in client (read whole, then refused for their missing
    // MAC: nothing is added to what the target copies), and log-ins from strangers.
    const record = JSON.stringify({ name: 'r'.repeat(15_000) });
    const bodies = Array.from({ length: 4 }, (_, i) => fetch(`${source.urls.ethernet}/api/controllers/big-${i}`, { method: 'PUT', headers: auth, body: record }).then((r) => r.status, () => 0));
    const logins = Array.from({ length: 4 }, () => fetch(`${source.urls.ethernet}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'x'.repeat(500) }) }).then((r) => r.status, () => 0));
    // And a provisioning target copying the source meanwhile (its boot runs the procedure).
    const target = await startSdkBoard({ identity: identity(2), fuseKeyHex: '42'.repeat(32), flashDir: join(dir, 'target'), adminPassword: PASSWORD, air });
    boards.push(target);

    const answers = await Promise.all(attackers.map((a) => a.answer));
    const statuses = answers.map((a) => a?.status ?? 'closed');
    // Each unfinished head was refused (503 board_busy for want of memory or of a connection) or timed
    // out (408); beyond what an interface serves and refuses at once, closed without an answer.
    for (const a of answers) {
      if (a === null) continue;
      expect([503, 408]).toContain(a.status);
      expect(a.json).toMatchObject({ error: a.status === 503 ? 'board_busy' : 'request_timeout' });
      if (a.status === 503) expect(a.headers['retry-after']).toBe('1');
    }
    expect(statuses.filter((s) => s === 503).length, JSON.stringify(statuses)).toBeGreaterThanOrEqual(2 * BOARD_HTTP_LIMITS.pendingPerInterface);
    // The bodies and log-ins arrive behind the attackers: answered (400 for the record without a MAC,
    // 401 for the wrong password), refused (503), or, when they find their interface at its limit of
    // connections being refused, closed at once (0), as docs/board-http-limits.md says; never a 500 or
    // a success.
    const bodyStatuses = await Promise.all(bodies);
    for (const s of bodyStatuses) expect([400, 503, 0]).toContain(s);
    const loginStatuses = await Promise.all(logins);
    for (const s of loginStatuses) expect([401, 503, 0]).toContain(s);

    const result = target.bootResult as { provisioning: { lines?: string[] } };
    expect(result.provisioning.lines).toEqual(['Prov OK 1C 8L', 'Prov OK got backup']);

    expect(source.reboots).toEqual([]);
    expect(source.consoleLines.filter((l) => /HOST firmware fault|memory full|abort/i.test(l))).toEqual([]);
    const during = samples.slice(fromSamples);
    const live = { chunkBytes: Math.max(...during.map((s) => s.chunkBytes)), slots: Math.max(...during.map((s) => s.slots)) };
    console.log(`request memory: ${REQUEST_MEMORY_BYTES} bytes; under attack the source held at most ${live.chunkBytes} chunk bytes and ${live.slots} slots live (${during.length} samples; before it, setting up: ${quiet.chunkBytes} and ${quiet.slots}); attackers ${JSON.stringify(statuses)}; record bodies ${JSON.stringify(bodyStatuses)}; log-ins ${JSON.stringify(loginStatuses)}`);
    expect(live.chunkBytes).toBeLessThanOrEqual(LIVE_CHUNK_LIMIT);
    expect(live.slots).toBeLessThanOrEqual(ATTACKED_SLOT_LIMIT);

    // Afterwards both interfaces answer, and nothing is left held.
    for (const url of [source.urls.ethernet!, source.urls.softap!]) expect((await fetch(`${url}/backup`)).status).toBe(401);
  });
});
