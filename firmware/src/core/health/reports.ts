// The three reports a board makes about its own health (docs/device-health.md, the wire format):
// `boot` after every boot, `heartbeat` every heartbeatSeconds, `update` at each step of an update and
// once at its end. Each is a small JSON object, at most MAX_REPORT_BYTES (a heartbeat at most
// MAX_HEARTBEAT_BYTES): the longer texts are cut to fit before it is made.
import type { Hal } from '../../hal/index.ts';
import type { CrashSummary, LastRun } from '../../hal/system.ts';
import { utf8Encode } from '../bytes.ts';
import { MAX_CRASH_MESSAGE_BYTES, MAX_DETAIL_BYTES, MAX_HEARTBEAT_BYTES, MAX_REPORT_BYTES, MAX_WHERE_BYTES } from './limits.ts';
import type { UpdateFailure, UpdateOutcome } from './outcomes.ts';

export { MAX_CRASH_MESSAGE_BYTES, MAX_DETAIL_BYTES, MAX_HEARTBEAT_BYTES, MAX_REPORT_BYTES } from './limits.ts';
/** A heartbeat's counters at most (999: "999 or more"), and its uptime at most (the chip's tick counter wraps sooner): so that it always fits its 256 bytes. */
export const MAX_HEARTBEAT_COUNT = 999;
export const MAX_UPTIME_SECONDS = 9_999_999;

interface Common {
  seq: number;
  /** ISO 8601 UTC, or null before the clock was set. */
  at: string | null;
  /** Uptime in seconds. */
  up: number;
  fw: string;
}

export type BootReport = Common & {
  kind: 'boot';
  reason: LastRun['reason'];
  by?: string;
  crash?: CrashSummary;
  slot: string;
  ota: string;
  rolled_back?: { slot: string; version: string };
  sv: number;
  boots: number;
  dropped: number;
};

export type HeartbeatReport = Common & {
  kind: 'heartbeat';
  chunk: number;
  chunk_peak: number;
  slots: number;
  slots_peak: number;
  block: number;
  heap_min: number;
  rssi: number | null;
  reboots: number;
  ota: string;
  dropped: number;
};

export type UpdateReport = Common & {
  kind: 'update';
  version: string;
  outcome: UpdateOutcome;
  reason?: UpdateFailure;
  detail?: string;
};

export type HealthReport = BootReport | HeartbeatReport | UpdateReport;

/** What every report carries, as the board is now: its time to the second, its uptime in seconds. */
export function common(hal: Pick<Hal, 'clock' | 'system'>, seq: number): Common {
  return {
    seq,
    at: hal.clock.synchronized() ? `${new Date(hal.clock.now()).toISOString().slice(0, 19)}Z` : null,
    up: Math.min(MAX_UPTIME_SECONDS, Math.floor(hal.clock.uptime() / 1000)),
    fw: hal.system.identity().firmwareVersion,
  };
}

/** A heartbeat's counter, held to MAX_HEARTBEAT_COUNT. */
export function count(n: number): number {
  return Math.min(MAX_HEARTBEAT_COUNT, n);
}

/** `text` cut to at most `maxBytes` as it will be on the wire (UTF-8 inside a JSON string, escapes counted), never inside a character. */
export function cutForJson(text: string, maxBytes: number): string {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const n = c === 0x22 || c === 0x5c || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x08 || c === 0x0c ? 2 : c < 0x20 ? 6 : c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3;
    if (bytes + n > maxBytes) return text.slice(0, i);
    bytes += n;
    if (n === 4) i++; // the low surrogate of the pair
  }
  return text;
}

/** A crash summary cut to fit a boot report. */
export function boundedCrash(crash: CrashSummary): CrashSummary {
  const out: CrashSummary = { kind: crash.kind, message: cutForJson(crash.message, MAX_CRASH_MESSAGE_BYTES) };
  if (crash.where) out.where = cutForJson(crash.where, MAX_WHERE_BYTES);
  return out;
}

export function boundedDetail(detail: string): string {
  return cutForJson(detail, MAX_DETAIL_BYTES);
}

/** The report's bytes on the wire; throws when it is larger than its kind allows (a bug: the fields are bounded). */
export function encodeReport(report: HealthReport): Uint8Array {
  const bytes = utf8Encode(JSON.stringify(report));
  const limit = report.kind === 'heartbeat' ? MAX_HEARTBEAT_BYTES : MAX_REPORT_BYTES;
  if (bytes.length > limit) throw new Error(`a ${report.kind} report of ${bytes.length} bytes is over its ${limit}`);
  return bytes;
}
