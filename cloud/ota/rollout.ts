// Staged rollouts, the pure part (docs/staged-rollouts.md): which devices a rollout reaches now. A
// device is in when its stable bucket (from its UUID, per release) is below the rollout's percentage,
// raised by the schedule, or when it is in one of the rollout's groups. A paused rollout reaches nobody
// new; one at 100 % reaches every device, even one that does not say who it is.
import { createHash } from 'node:crypto';
import { perThousandHours } from '../health-definitions.ts';
import type { ReleaseTrack, Rollout } from '../store/types.ts';

/** Buckets per percent point: a device's place in a rollout is one of 10,000. */
const BUCKETS = 10_000;

/** The percentage a rollout is at, at `nowMs`: its own, plus the schedule's steps since it was set. */
export function effectivePercent(r: Pick<Rollout, 'state' | 'percent' | 'stepPercent' | 'stepEverySeconds' | 'anchorAtMs'>, nowMs: number): number {
  if (r.state !== 'active' || !r.stepPercent || !r.stepEverySeconds) return r.percent;
  const steps = Math.floor((nowMs - r.anchorAtMs) / (r.stepEverySeconds * 1000));
  return Math.min(100, r.percent + Math.max(0, steps) * r.stepPercent);
}

/** The schedule's next raise: when, and to what percentage; null when paused, without a schedule, or at 100 %. */
export function nextStep(r: Pick<Rollout, 'state' | 'percent' | 'stepPercent' | 'stepEverySeconds' | 'anchorAtMs'>, nowMs: number): { atMs: number; percent: number } | null {
  if (r.state !== 'active' || !r.stepPercent || !r.stepEverySeconds || effectivePercent(r, nowMs) >= 100) return null;
  const period = r.stepEverySeconds * 1000;
  const steps = Math.max(0, Math.floor((nowMs - r.anchorAtMs) / period)) + 1;
  return { atMs: r.anchorAtMs + steps * period, percent: Math.min(100, r.percent + steps * r.stepPercent) };
}

/**
 * A device's bucket in a release's rollout, 0 to 9,999: stable for that device and release (the first
 * four bytes of SHA-256 over track, version and UUID), so raising the percentage only ever adds
 * devices, and another release draws another first cohort.
 */
export function bucketOf(track: ReleaseTrack, version: string, uuid: string): number {
  const digest = createHash('sha256').update(`${track.class}/${track.productHex}/${track.application}/${version}/${uuid}`).digest();
  return digest.readUInt32BE(0) % BUCKETS;
}

/** Reaches every device: the release is then answered exactly as the spec says. */
export function reachesEveryone(r: Rollout, nowMs: number): boolean {
  return r.state === 'active' && effectivePercent(r, nowMs) >= 100;
}

/** Whether the rollout offers its release to this device now. */
export function reaches(r: Rollout, uuid: string | undefined, groupMembers: ReadonlySet<string>, nowMs: number): boolean {
  if (r.state !== 'active') return false;
  const percent = effectivePercent(r, nowMs);
  if (percent >= 100) return true;
  if (uuid === undefined) return false;
  if (groupMembers.has(uuid)) return true;
  return bucketOf(r, r.version, uuid) < percent * (BUCKETS / 100);
}

/** Whether the outcomes reached the error threshold (the rollout then pauses by itself). */
export function overErrorThreshold(r: Pick<Rollout, 'errorThresholdPercent' | 'minReports'>, counts: { succeeded: number; failed: number }): boolean {
  const reported = counts.succeeded + counts.failed;
  return counts.failed > 0 && reported >= r.minReports && counts.failed * 100 >= r.errorThresholdPercent * reported;
}

/** What the health gate judges: a release's unexpected reboots and the time its devices ran it. */
export interface HealthSample {
  version: string;
  unexpected: number;
  deviceSeconds: number;
}

export interface HealthGateVerdict {
  /** Unexpected reboots per 1,000 device-hours of the release, and of the previous RELEASED version (0 without one, or without its device-hours). */
  rate: number | null;
  previousRate: number;
  deviceHours: number;
  /** The release has run the minimum device-hours: the gate judges. */
  judging: boolean;
  /** Judging, and over the previous rate by more than the margin: the rollout pauses by itself. */
  over: boolean;
}

/**
 * The health gate of a rollout (docs/staged-rollouts.md): the release's rate of unexpected reboots per
 * 1,000 device-hours against the previous RELEASED version's, once the release has run
 * `healthMinDeviceHours`; over when it exceeds it by more than `healthMargin`. Off (never over) without a margin.
 */
export function healthGate(r: Pick<Rollout, 'healthMargin' | 'healthMinDeviceHours'>, current: HealthSample, previous: HealthSample | null): HealthGateVerdict {
  const rate = perThousandHours(current.unexpected, current.deviceSeconds);
  const previousRate = (previous && perThousandHours(previous.unexpected, previous.deviceSeconds)) ?? 0;
  const deviceHours = current.deviceSeconds / 3600;
  const judging = r.healthMargin !== null && deviceHours >= r.healthMinDeviceHours;
  return { rate, previousRate, deviceHours, judging, over: judging && rate !== null && rate - previousRate > r.healthMargin! };
}
