// The update check's selection rules (spec 4.1), pure: given the releases of one track and the
// device's current version, decide the answer. Version order is string order (YYYY.MM.bb).
// A staged rollout (docs/staged-rollouts.md) only ever holds a device back: when the spec's candidate
// is a release whose rollout does not reach the device, the device is answered as if nothing newer
// were RELEASED (rules 4 and 5), so it neither skips that release nor gets it early.
import type { FirmwareRelease } from '../store/types.ts';

export type OtaDecision =
  | { kind: 'list'; releases: FirmwareRelease[] } //          rule 1
  | { kind: 'none_released' } //                                rule 2
  | { kind: 'next'; release: FirmwareRelease } //               rule 3
  | { kind: 'current'; release: FirmwareRelease } //            rule 4
  | { kind: 'current_revoked' } //                              rule 5
  | { kind: 'current_unknown' }; //                             not in the spec: see docs/ota-unknown-version.md

/** The spec's rule 3 candidate: the oldest RELEASED version strictly greater than current_version. */
export function candidateOf(releases: readonly FirmwareRelease[], currentVersion: string): FirmwareRelease | undefined {
  return releases.find((r) => r.status === 'RELEASED' && r.version > currentVersion);
}

/**
 * `releases` must be sorted by version ascending (the store returns them so). `held`: the candidate
 * is staged and its rollout does not reach this device.
 */
export function selectUpdate(releases: readonly FirmwareRelease[], currentVersion: string | undefined, held = false): OtaDecision {
  const released = releases.filter((r) => r.status === 'RELEASED');
  if (released.length === 0) return { kind: 'none_released' };
  if (currentVersion === undefined) return { kind: 'list', releases: released };
  // The oldest RELEASED version strictly greater than current_version: sequential upgrades.
  const next = candidateOf(released, currentVersion);
  if (next && !held) return { kind: 'next', release: next };
  const current = releases.find((r) => r.version === currentVersion);
  if (!current) return { kind: 'current_unknown' };
  return current.status === 'RELEASED' ? { kind: 'current', release: current } : { kind: 'current_revoked' };
}
