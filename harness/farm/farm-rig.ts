// A rig whose boards come from a farm: each run of the bench holds places on the coordinator for as
// long as it runs (harness/repeat.ts RigSource), the boards being the places' ports, driven as
// physical boards over RFC 2217 and named after their places in the report.
import type { RigSpec } from '../rig.ts';
import type { HeldRig, RigSource } from '../repeat.ts';
import { FarmLease } from './reserve.ts';

export interface FarmHold {
  coordinator: string;
  say?: (line: string) => void;
  signal?: AbortSignal;
  /** Every lease taken, for the figures (waits) and for a stop that must give them back. */
  leases?: FarmLease[];
}

export function farmRig(rig: RigSpec, o: FarmHold): RigSource {
  const farm = rig.farm!;
  return async (): Promise<HeldRig> => {
    const lease = await FarmLease.take({ coordinator: o.coordinator, places: farm.places, waitMs: farm.waitSeconds * 1000, ...(o.say ? { say: o.say } : {}), ...(o.signal ? { signal: o.signal } : {}) });
    o.leases?.push(lease);
    return { rig: { ...rig, boards: lease.held.map((h) => h.board) }, identified: lease.identified(), release: () => lease.release() };
  };
}
