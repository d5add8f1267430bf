// The board's health reports (core/health, docs/device-health.md) on the memory platform, run on Node
// and inside XS: the ring on flash (its bound, what it drops and counts, its numbers that never
// repeat), the reports within their sizes whatever a crash's message holds, and the update refused
// while the running image is not confirmed yet (refused_unconfirmed: on a virtual board the firmware
// confirms itself before it takes the console's `ota check`). What a virtual board reports of its own
// resets and updates: test/firmware/sdk-board-health.test.ts, sdk-board-update-outcomes.test.ts.
import type { ClientRequest, ClientResponse } from '../src/hal/network.ts';
import { utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { writeCloudConfig } from '../src/core/cloud/config.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { HealthRing, RING_CAPACITY } from '../src/core/health/ring.ts';
import { boundedCrash, encodeReport, MAX_HEARTBEAT_BYTES, MAX_HEARTBEAT_COUNT, MAX_REPORT_BYTES, MAX_UPTIME_SECONDS, type BootReport, type HeartbeatReport } from '../src/core/health/reports.ts';
import { MemoryStorage } from '../src/platform/memory/storage.ts';
import { deepEqual, equal, ok, type TestCase } from './assert.ts';
import { bench, board } from './fixtures.ts';

const CLOUD = 'https://cloud.example';

function heartbeat(seq: number): HeartbeatReport {
  return { kind: 'heartbeat', seq, at: '2026-11-28T12:00:00.000Z', up: 3600, fw: '2026.01.01', chunk: 20000, chunk_peak: 30000, slots: 1400, slots_peak: 1500, block: 90000, heap_min: 80000, rssi: -61, reboots: 0, ota: 'valid', dropped: 0 };
}

export const healthCases: TestCase[] = [
  {
    name: `the ring keeps ${RING_CAPACITY} reports, drops the oldest and counts them, and its numbers go on from a random start across restarts`,
    async run() {
      const storage = new MemoryStorage();
      const random = (n: number) => new Uint8Array(n).fill(7);
      const ring = new HealthRing(storage, { randomBytes: random });
      const first = ring.nextSeq();
      ok(first > 1 && first < 0x40000001, `a random first number (${first})`);
      for (let i = 0; i < RING_CAPACITY + 3; i++) ring.append(heartbeat(i === 0 ? first : ring.nextSeq()));
      equal(ring.size(), RING_CAPACITY, 'bounded');
      equal(ring.current().dropped, 3, 'three dropped, counted');
      const oldest = ring.oldest()!;
      equal(oldest.seq, first + 3, 'the oldest three went');
      equal((JSON.parse(utf8Decode(oldest.bytes)) as HeartbeatReport).seq, first + 3, 'and it is that report');
      ring.remove(oldest.seq, true);
      equal(ring.current().dropped, 4, 'a report the cloud refuses is counted too');
      // A restart: the state is on flash.
      const again = new HealthRing(storage, { randomBytes: () => new Uint8Array(4) });
      equal(again.nextSeq(), first + RING_CAPACITY + 3, 'numbering goes on, whatever the new random');
      equal(again.current().dropped, 4, 'the count too');
    },
  },
  {
    name: 'reports stay within their sizes: a heartbeat within 256 bytes at its largest, a boot report within 2 KB whatever a crash message holds',
    async run() {
      // Every field at the most a board can send (a chip heap under 512 KB, counters and uptime held: reports.ts).
      const big: HeartbeatReport = { ...heartbeat(2_147_483_647), at: '2026-11-28T12:00:00Z', up: MAX_UPTIME_SECONDS, fw: '2026.12.31', chunk: 78848, chunk_peak: 78848, slots: 4927, slots_peak: 4927, block: 524_288, heap_min: 524_288, rssi: -127, reboots: MAX_HEARTBEAT_COUNT, ota: 'pending_verify', dropped: MAX_HEARTBEAT_COUNT };
      ok(encodeReport(big).length <= MAX_HEARTBEAT_BYTES, `the largest heartbeat is ${encodeReport(big).length} bytes`);
      const boot: BootReport = {
        kind: 'boot', seq: 2_147_483_647, at: '2026-11-28T12:00:00.000Z', up: 1, fw: '2026.01.01', reason: 'abort', by: 'x'.repeat(64),
        crash: boundedCrash({ kind: 'unhandled_exception', message: 'é"\n\u0001'.repeat(2000), where: '\u0002'.repeat(500) }),
        slot: 'ota_1', ota: 'pending_verify', rolled_back: { slot: 'ota_0', version: '2026.12.31' }, sv: 255, boots: 99_999, dropped: 99_999,
      };
      ok(encodeReport(boot).length <= MAX_REPORT_BYTES, `the largest boot report is ${encodeReport(boot).length} bytes`);
      let refused = '';
      try {
        encodeReport({ ...big, ota: 'x'.repeat(300) });
      } catch (err) {
        refused = (err as Error).message;
      }
      ok(/over its 256/.test(refused), 'an oversized heartbeat is refused, not sent');
    },
  },
  {
    name: 'an update offered while the running image is not confirmed yet is refused (refused_unconfirmed), reported, and nothing downloaded',
    async run() {
      const b = bench();
      const seen: ClientRequest[] = [];
      const reports: Record<string, unknown>[] = [];
      const internet = async (r: ClientRequest): Promise<ClientResponse> => {
        if (r.url.endsWith('/health')) {
          const bytes = r.body instanceof Uint8Array ? r.body : new Uint8Array(0);
          reports.push(JSON.parse(utf8Decode(bytes)) as Record<string, unknown>);
          return { status: 201, headers: {}, body: bytesReader(utf8Encode('{}')) };
        }
        seen.push(r);
        const manifest = { version: '2026.05.01', url: `${CLOUD}/images/2026.05.01.bin`, size: 4096, sha256: '00'.repeat(32) };
        return { status: 200, headers: { 'content-type': 'application/json' }, body: bytesReader(utf8Encode(JSON.stringify(manifest))) };
      };
      const c = board(b, { role: 'controller', internet });
      writeCloudConfig(c.storage, { url: CLOUD });
      c.runningApp.state = 'pending_verify';
      await c.device.console.dispatch('ota check');
      ok(c.consoleOut.some((l) => /^ERR refused_unconfirmed /.test(l)), 'the console says why');
      equal(seen.length, 1, 'the update check only: nothing downloaded');
      equal(c.otaImages.length, 0, 'nothing written');
      await c.device.health.send();
      const updates = reports.filter((r) => r.kind === 'update');
      deepEqual(updates.map((u) => [u.version, u.outcome, u.reason]), [['2026.05.01', 'failed', 'refused_unconfirmed']], 'the one update report');
    },
  },
];
