// Device health as the admin API shows it (cloud/schema/health.ts, DeviceHealth in cloud/schema/api.ts):
// the store's records in the API's words, with the figures derived from them (device-hours, the rate per
// 1,000 device-hours, the crash-free share).
import type { Static } from '@sinclair/typebox';
import type { DeviceHealth } from '../schema/api.ts';
import type { HealthDayView, ReleaseHealthFigures as ReleaseHealthFiguresShape } from '../schema/health.ts';
import type { DeviceHealthState, HealthDay, RebootCounts, ReleaseHealthFigures } from '../store/types.ts';
import { perThousandHours, unexpectedOf } from '../health-definitions.ts';

export type DeviceHealthView = Static<typeof DeviceHealth>;
export type ReleaseHealthView = Static<typeof ReleaseHealthFiguresShape>;

const hours = (seconds: number) => Math.round((seconds / 3600) * 1000) / 1000;

export function deviceHealthView(h: DeviceHealthState | null): DeviceHealthView | null {
  if (!h) return null;
  return {
    last_report_at: h.lastReportAt,
    last_boot: h.lastBoot,
    last_crash: h.lastCrash,
    heap: h.heartbeat && { at: h.heartbeat.at, block: h.heartbeat.block, heap_min: h.heartbeat.heapMin },
    rssi: h.heartbeat?.rssi ?? null,
    dropped: h.dropped,
  };
}

export function healthDayView(d: HealthDay): Static<typeof HealthDayView> {
  return {
    day: d.day,
    version: d.version,
    reports: d.reports,
    boots: d.boots,
    heartbeats: d.heartbeats,
    device_hours: hours(d.deviceSeconds),
    unexpected_reboots: unexpectedOf(d.reboots),
    reboots: d.reboots,
    crashes: d.crashes,
    heap_min: d.heapMin,
    block_min: d.blockMin,
    rssi_min: d.rssiMin,
  };
}

/** A release's figures: devices, device-hours, unexpected reboots per 1,000 device-hours, crash-free share, outcomes. */
export function releaseHealthView(f: ReleaseHealthFigures): ReleaseHealthView {
  const unexpected = unexpectedOf(f.reboots);
  return {
    class: f.class,
    product_hex: f.productHex,
    application: f.application,
    version: f.version,
    devices: f.devices,
    device_hours: hours(f.deviceSeconds),
    boots: f.boots,
    heartbeats: f.heartbeats,
    unexpected_reboots: unexpected,
    unexpected_per_1000h: perThousandHours(unexpected, f.deviceSeconds),
    crash_free_share: f.devices > 0 ? (f.devices - f.crashedDevices) / f.devices : null,
    reboots: f.reboots,
    crashes: f.crashes,
    outcomes: { in_progress: f.outcomes.inProgress, succeeded: f.outcomes.succeeded, failed: f.outcomes.failed, rolled_back: f.outcomes.rolledBack },
  };
}
