// The update check's selection rules (spec 4.1), pure: given the releases of one track and the
// device's current version, decide the answer. Version order is string order (YYYY.MM.bb).
import type { FirmwareRelease } from '../store/types.ts';

export type OtaDecision =
  | { kind: 'list'; releases: FirmwareRelease[] } //          rule 1
  | { kind: 'none_released' } //                                rule 2
  | { kind: 'next'; release: FirmwareRelease } //               rule 3
  | { kind: 'current'; release: FirmwareRelease } //            rule 4
  | { kind: 'current_revoked' } //                              rule 5
  | { kind: 'current_unknown' }; //                             not in the spec: see docs/ota-unknown-version.md

/** `releases` must be sorted by version ascending (the store returns them so). */
export function selectUpdate(releases: readonly FirmwareRelease[], currentVersion: string | undefined): OtaDecision {
  const released = releases.filter((r) => r.status === 'RELEASED');
  if (released.length === 0) return { kind: 'none_released' };
  if (currentVersion === undefined) return { kind: 'list', releases: released };
  // The oldest RELEASED version strictly greater than current_version: sequential upgrades.
  const next = released.find((r) => r.version > currentVersion);
  if (next) return { kind: 'next', release: next };
  const current = releases.find((r) => r.version === currentVersion);
  if (!current) return { kind: 'current_unknown' };
  return current.status === 'RELEASED' ? { kind: 'current', release: current } : { kind: 'current_revoked' };
}
