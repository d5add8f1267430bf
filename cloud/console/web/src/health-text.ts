// How the console's health pages say their figures (docs/device-health.md): rates, shares, hours, bytes,
// counts by reason, and what one report says. Plain strings: Preact renders them as text.
import type { Heartbeat, ReleaseFigures, TimelineEntry } from './types.ts';
import { when } from './ui.tsx';

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const count = (n: number) => whole.format(n);
export const bytes = (n: number) => `${whole.format(n)} B`;
export const hours = (h: number) => h.toFixed(1);
/** Unexpected reboots per 1,000 device-hours; '—' while the release has no device-hours. */
export const rate = (r: number | null) => (r === null ? '—' : r.toFixed(1));
/** A share from 0 to 1 as a percentage; '—' with no devices. */
export const share = (s: number | null) => (s === null ? '—' : `${(s * 100).toFixed(s === 1 || s === 0 ? 0 : 1)} %`);
/** A crash as the pages say it: `<when>: <kind>` (its message, when shown, beside it). */
export const crashText = (crash: { at: string; kind: string }) => `${when(crash.at)}: ${crash.kind}`;
export const dbm = (rssi: number | null | undefined) => (rssi === null || rssi === undefined ? '—' : `${rssi} dBm`);

/** The counts of a breakdown that are not zero, largest first: [[reason, n], …]. */
export function nonZero(counts: Record<string, number>): [string, number][] {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** `watchdog 2, abort 1`; 'none' when every count is zero. */
export const breakdown = (counts: Record<string, number>) =>
  nonZero(counts)
    .map(([k, n]) => `${k} ${count(n)}`)
    .join(', ') || 'none';

/** Sums breakdowns key by key (the fleet's reboots by reason, over its releases). */
export function summed(all: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const counts of all) for (const [k, n] of Object.entries(counts)) out[k] = (out[k] ?? 0) + n;
  return out;
}

/** Devices by the last step they reported updating to a release: `3 succeeded, 1 rolled back, …`. */
export function outcomesText(o: ReleaseFigures['outcomes']): string {
  const failed = nonZero(o.failed).map(([reason, n]) => `${count(n)} failed: ${reason}`);
  const parts = [`${count(o.succeeded)} succeeded`, ...(o.rolled_back ? [`${count(o.rolled_back)} rolled back`] : []), ...failed, ...(o.in_progress ? [`${count(o.in_progress)} in progress`] : [])];
  return parts.join(', ');
}

/** When a report was made: the board's own time, else (no clock yet) when the cloud received it. */
export const reportTime = (e: TimelineEntry) => e.report.at ?? e.received_at;

export function isHeartbeat(e: TimelineEntry): e is TimelineEntry & { report: Heartbeat } {
  return e.report.kind === 'heartbeat';
}

/** A heartbeat in one line (the crash and update rows have their own cells). */
export const heartbeatText = (h: Heartbeat) =>
  `largest free block ${bytes(h.block)}, lowest free heap ${bytes(h.heap_min)}, XS chunk ${bytes(h.chunk)} (peak ${bytes(h.chunk_peak)}), slots ${bytes(h.slots)}, RSSI ${dbm(h.rssi)}, reboots ${h.reboots}${h.dropped ? `, dropped ${h.dropped}` : ''}`;
