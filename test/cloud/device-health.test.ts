// POST /devices/{uuid}/health end to end over HTTP with real signatures (docs/device-health.md): a
// report is stored once per seq (201, then 200), every refusal (400, 401, 403, 413, 415) stores nothing,
// a device keeps its newest 200 reports, and the admin API shows its timeline and its inventory health.
import type { KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_REPORTS_KEPT } from '../../cloud/health-definitions.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { bootReport, heartbeatReport, postReport, updateReport } from '../helpers/health.ts';
import { streamedPost } from '../helpers/streamed-post.ts';

let cloud: TestCloud;
let clock = Date.parse('2026-06-01T12:00:00Z');
const DAY = 86_400_000;
let key: KeyObject;
const UUID = 'health-dev-1';

beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock });
  key = (await cloud.enroll(UUID)).privateKey;
});
afterAll(() => cloud.close());

const post = (body: unknown, o: { uuid?: string; key?: KeyObject; nowMs?: number; headers?: Record<string, string> } = {}) =>
  postReport(cloud.url, o.key ?? key, o.uuid ?? UUID, body, { nowMs: o.nowMs ?? clock, ...(o.headers ? { headers: o.headers } : {}) });

/** What the store holds of a device's health: its reports and state. */
async function stored(uuid = UUID) {
  const reports = await cloud.store.listHealthReports(uuid, { limit: 1000 });
  const [device] = await cloud.store.listInventory({ uuid, limit: 1 });
  return { seqs: reports.map((r) => r.report.seq), health: device?.health ?? null };
}

/** The report's headers and these chunks of its body (chunked unless a length is declared), ended or not: the answer. */
async function streamed(headers: Record<string, string>, chunks: string[], end: boolean): Promise<{ status: number; body: any }> {
  const r = await streamedPost(`${cloud.url}/devices/${UUID}/health`, { ...signDeviceRequest(key, UUID, { nowMs: clock }), 'content-type': 'application/json', ...headers }, chunks, { end });
  return { status: r.status, body: JSON.parse(r.body) };
}

describe('every refusal stores nothing', () => {
  const signedBy = (k: KeyObject, uuid = UUID, nowMs = clock) => ({ ...signDeviceRequest(k, uuid, { nowMs }), 'content-type': 'application/json' });

  it('bad headers (400), another device named (403), another media type (415)', async () => {
    const noSignature = await fetch(`${cloud.url}/devices/${UUID}/health`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-device-uuid': UUID }, body: JSON.stringify(bootReport(1)) });
    expect(noSignature.status).toBe(400);
    expect(((await noSignature.json()) as any).error).toBe('missing_header');
    const mismatch = await fetch(`${cloud.url}/devices/${UUID}/health`, { method: 'POST', headers: signedBy(key, 'someone-else'), body: JSON.stringify(bootReport(1)) });
    expect(mismatch.status).toBe(403);
    expect(await post(bootReport(1), { headers: { 'content-type': 'text/plain' } })).toMatchObject({ status: 415, body: { error: 'unsupported_media_type' } });
    expect(await stored()).toEqual({ seqs: [], health: null });
  });

  it('a body that is not a report of its shape: 400 invalid_health_report naming the field', async () => {
    const refused = [
      ['{"kind": "boot",', undefined],
      ['[1, 2]', undefined],
      [{ ...bootReport(1), kind: 'reboot' }, 'kind'],
      [{ ...bootReport(1), reason: 'meltdown' }, 'reason'],
      [{ ...bootReport(1), fw: '26.1' }, 'fw'],
      [{ ...bootReport(1), seq: -1 }, 'seq'],
      [{ ...bootReport(1), at: '2026-02-30T00:00:00Z' }, 'at'],
      [{ ...bootReport(1), reason: 'power_on', crash: { kind: 'panic', message: 'x' } }, 'crash'],
      [{ ...bootReport(1), reason: 'panic', crash: { kind: 'meltdown', message: 'x' } }, 'crash.kind'],
      [{ ...heartbeatReport(1), rssi: 12 }, 'rssi'],
      [updateReport(1, { outcome: 'failed' }), 'reason'],
      [{ ...updateReport(1, { outcome: 'failed' }), reason: 'gremlins' }, 'reason'],
      [updateReport(1, { outcome: 'succeeded', detail: 'fine' }), 'detail'],
    ] as const;
    for (const [body, field] of refused) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error, JSON.stringify(body)).toBe('invalid_health_report');
      if (field) {
        expect(r.body.details.field, JSON.stringify(body)).toBe(field);
        expect(r.body.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
      }
    }
    const unknown = await post({ ...heartbeatReport(1), colour: 'red' });
    expect(unknown.body).toMatchObject({ error: 'invalid_health_report', details: { unknown_keys: ['colour'] } });
    expect(await stored()).toEqual({ seqs: [], health: null });
  });

  it('413: a declared length over 2,048 bytes before the body is read, a chunked one as it passes it, a heartbeat over 256', async () => {
    const early = await streamed({ 'content-length': '2049' }, ['{"kind"'], false);
    expect(early).toMatchObject({ status: 413, body: { error: 'health_report_too_large', details: { limit_bytes: 2048, content_length: 2049 } } });
    const long = JSON.stringify({ ...bootReport(1), reason: 'panic', crash: { kind: 'panic', message: 'x'.repeat(1024), where: 'y'.repeat(128) }, by: 'z'.repeat(64), padding: 'p'.repeat(800) });
    const chunked = await streamed({}, [long.slice(0, 1000), long.slice(1000, 2000), long.slice(2000)], true);
    expect(chunked).toMatchObject({ status: 413, body: { error: 'health_report_too_large', details: { limit_bytes: 2048 } } });
    const big = await post({ ...heartbeatReport(1), at: '2026-06-01T12:00:00.123456789Z', seq: 9_007_199_254_740_991, chunk: 4_294_967_295, chunk_peak: 4_294_967_295, slots: 4_294_967_295, dropped: 4_294_967_295 });
    expect(big).toMatchObject({ status: 413, body: { error: 'health_report_too_large', details: { limit_bytes: 256, kind: 'heartbeat' } } });
    expect(await stored()).toEqual({ seqs: [], health: null });
  });

  it('401 for an unknown device, a timestamp out of the window, another key, a replayed nonce', async () => {
    const other = (await cloud.enroll('health-dev-other')).privateKey;
    const body = JSON.stringify(bootReport(1));
    const send = (headers: Record<string, string>, uuid = UUID) => fetch(`${cloud.url}/devices/${uuid}/health`, { method: 'POST', headers, body }).then(async (r) => [r.status, ((await r.json()) as any).error]);
    expect(await send(signedBy(key, 'nobody-here'), 'nobody-here')).toEqual([401, 'unknown_device']);
    expect(await send(signedBy(key, UUID, clock - 301_000))).toEqual([401, 'timestamp_out_of_window']);
    expect(await send(signedBy(other))).toEqual([401, 'invalid_signature']);
    const once = signedBy(other, 'health-dev-other');
    expect(await send(once, 'health-dev-other')).toEqual([201, undefined]);
    expect(await send(once, 'health-dev-other')).toEqual([401, 'nonce_replayed']);
    expect(await stored()).toEqual({ seqs: [], health: null });
  });
});

describe('a report stored', () => {
  it('201 {seq} once, 200 {seq} for the same seq again (a resend after a lost answer): stored once', async () => {
    expect(await post(bootReport(1, { reason: 'power_on', at: '2026-06-01T11:59:58Z' }))).toEqual({ status: 201, body: { seq: 1 } });
    expect(await post(bootReport(1, { reason: 'power_on' }))).toEqual({ status: 200, body: { seq: 1 } });
    expect((await stored()).seqs).toEqual([1]);
    expect((await stored()).health).toMatchObject({ lastBoot: { at: '2026-06-01T11:59:58.000Z', reason: 'power_on', version: '2026.01.01' }, lastCrash: null, heartbeat: null });
  });

  it('keeps the newest 200 reports of a device; a pruned seq sent again is still answered 200 and stored nothing', async () => {
    for (let seq = 2; seq <= HEALTH_REPORTS_KEPT + 5; seq++) expect((await post(heartbeatReport(seq, { up: 3600 * seq }))).status).toBe(201);
    const { seqs } = await stored();
    expect(seqs).toHaveLength(HEALTH_REPORTS_KEPT);
    expect([seqs[0], seqs.at(-1)]).toEqual([HEALTH_REPORTS_KEPT + 5, 6]);
    expect(await post(heartbeatReport(3))).toEqual({ status: 200, body: { seq: 3 } });
    expect(await post(heartbeatReport(100))).toEqual({ status: 200, body: { seq: 100 } });
    expect((await stored()).seqs).toEqual(seqs);
  });
});

describe('the admin API', () => {
  it("a device's timeline: its health, its reports newest first (paged by seq), its daily aggregates", async () => {
    const crash = { kind: 'memory_full' as const, message: 'memory full: chunk heap', where: 'core/http/router.ts:88' };
    expect((await post(bootReport(500, { reason: 'abort', crash, up: 3 }))).status).toBe(201);
    expect((await post(heartbeatReport(501, { up: 3603, block: 9_000, heap_min: 7_500, rssi: -77, dropped: 2 }))).status).toBe(201);
    const t = await cloud.adminJson('GET', `/admin/devices/${UUID}/health?limit=2`);
    expect(t.status).toBe(200);
    expect(t.body.health).toEqual({
      last_report_at: new Date(clock).toISOString(),
      last_boot: { at: new Date(clock).toISOString(), reason: 'abort', version: '2026.01.01' },
      last_crash: { at: new Date(clock).toISOString(), kind: 'memory_full', message: 'memory full: chunk heap', version: '2026.01.01' },
      heap: { at: new Date(clock).toISOString(), block: 9_000, heap_min: 7_500 },
      rssi: -77,
      dropped: 2,
    });
    expect(t.body.reports.map((r: any) => [r.report.seq, r.report.kind])).toEqual([
      [501, 'heartbeat'],
      [500, 'boot'],
    ]);
    expect(t.body.reports[1]).toEqual({ received_at: new Date(clock).toISOString(), report: bootReport(500, { reason: 'abort', crash, up: 3 }) });
    expect(t.body.next_before).toBe(500);
    const next = await cloud.adminJson('GET', `/admin/devices/${UUID}/health?limit=2&before=500`);
    expect(next.body.reports.map((r: any) => r.report.seq)).toEqual([HEALTH_REPORTS_KEPT + 5, HEALTH_REPORTS_KEPT + 4]);
    expect(t.body.days).toHaveLength(1);
    expect(t.body.days[0]).toMatchObject({ day: '2026-06-01', version: '2026.01.01', boots: 2, unexpected_reboots: 1, reboots: { abort: 1 }, crashes: { memory_full: 1 }, block_min: 9_000, heap_min: 7_500, rssi_min: -77 });
    expect((await cloud.adminJson('GET', '/admin/devices/nobody/health')).status).toBe(404);
    expect((await cloud.adminJson('GET', `/admin/devices/${UUID}/health?limit=0`)).body).toMatchObject({ error: 'invalid_query', details: { field: 'limit' } });
  });

  it('the inventory shows health, and filters on an unexpected reboot in the last N days and on low heap', async () => {
    const quiet = (await cloud.enroll('health-dev-quiet')).privateKey;
    clock -= 3 * DAY;
    expect((await post(bootReport(1, { reason: 'watchdog' }), { uuid: 'health-dev-quiet', key: quiet })).status).toBe(201);
    clock += 3 * DAY;
    expect((await post(heartbeatReport(2, { block: 50_000 }), { uuid: 'health-dev-quiet', key: quiet })).status).toBe(201);
    const list = async (q: string) => (await cloud.adminJson('GET', `/admin/devices?search=health-dev&${q}`)).body.devices.map((d: any) => d.uuid);
    expect(await list('crashed_days=1')).toEqual([UUID]);
    expect(await list('crashed_days=7')).toEqual([UUID, 'health-dev-quiet']);
    expect(await list('low_heap=16384')).toEqual([UUID]);
    expect(await list('low_heap=60000')).toEqual([UUID, 'health-dev-quiet']);
    const one = (await cloud.adminJson('GET', '/admin/devices/health-dev-quiet')).body;
    expect(one.health).toMatchObject({ last_crash: { kind: 'watchdog', message: null }, heap: { block: 50_000 }, rssi: -61, dropped: null });
    expect((await cloud.adminJson('GET', '/admin/devices/health-dev-other')).body.health).toMatchObject({ last_boot: { reason: 'power_on' }, last_crash: null });
  });

  it('the fleet summary: devices reporting, crashed lately, low on heap, reports dropped', async () => {
    const f = (await cloud.adminJson('GET', '/admin/health?crashed_days=1&low_heap=16384')).body;
    expect(f).toMatchObject({ devices: 3, reporting: 3, crashed: 1, low_heap: 1, dropped: 2, crashed_days: 1, low_heap_bytes: 16384 });
    expect((await cloud.adminJson('GET', '/admin/health?colour=red')).status).toBe(400);
  });

  it('a removed device takes its health with it', async () => {
    expect((await cloud.admin('DELETE', '/admin/devices/health-dev-quiet')).status).toBe(204);
    expect(await cloud.store.listHealthReports('health-dev-quiet', { limit: 10 })).toEqual([]);
    expect((await cloud.adminJson('GET', '/admin/health')).body).toMatchObject({ devices: 2, reporting: 2 });
  });
});

describe('a boot report as the firmware makes it', () => {
  it("a boot report carries the board's dropped count as a heartbeat does (the firmware sends it in both)", async () => {
    const k = (await cloud.enroll('health-dev-dropped')).privateKey;
    expect(await post(bootReport(7, { dropped: 3 }), { uuid: 'health-dev-dropped', key: k })).toEqual({ status: 201, body: { seq: 7 } });
    expect((await cloud.adminJson('GET', '/admin/devices/health-dev-dropped')).body.health).toMatchObject({ last_boot: { reason: 'power_on' }, dropped: 3 });
  });
});
