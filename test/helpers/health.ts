// Health reports as a board makes them (docs/device-health.md), for the tests of the ingest route, the
// store, the rollout's health gate and the CLI; and a signed POST of one.
import type { KeyObject } from 'node:crypto';
import type { BootReport, HeartbeatReport, UpdateReport } from '../../cloud/store/types.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';

export const FW = '2026.01.01';

export const bootReport = (seq: number, o: Partial<BootReport> = {}): BootReport => ({
  kind: 'boot',
  seq,
  at: null,
  up: 4,
  fw: FW,
  reason: 'power_on',
  slot: 'ota_0',
  ota: 'valid',
  sv: 0,
  boots: seq,
  ...o,
});

export const heartbeatReport = (seq: number, o: Partial<HeartbeatReport> = {}): HeartbeatReport => ({
  kind: 'heartbeat',
  seq,
  at: null,
  up: 3600,
  fw: FW,
  chunk: 21_000,
  chunk_peak: 30_500,
  slots: 9_800,
  slots_peak: 12_000,
  block: 40_000,
  heap_min: 31_000,
  rssi: -61,
  reboots: 0,
  ota: 'valid',
  ...o,
});

export const updateReport = (seq: number, o: Partial<UpdateReport> = {}): UpdateReport => ({ kind: 'update', seq, at: null, up: 120, fw: FW, version: '2026.02.01', outcome: 'succeeded', ...o });

/** POST /devices/{uuid}/health, signed with the device's key (at `nowMs`), the body as given (JSON of an object, or raw text). */
export async function postReport(
  url: string,
  key: KeyObject,
  uuid: string,
  body: unknown,
  o: { nowMs?: number; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/devices/${uuid}/health`, {
    method: 'POST',
    headers: { ...signDeviceRequest(key, uuid, o.nowMs === undefined ? {} : { nowMs: o.nowMs }), 'content-type': 'application/json', ...o.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
