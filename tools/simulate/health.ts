// What a simulated device reports of its health (`fleet simulate --health`, docs/device-health.md): a
// boot report after its boot and a heartbeat an hour of uptime later, as the firmware makes them; the
// reports are stored once per seq, so a device that sends one again after a lost answer gets 200.
import type { BootReport, HeartbeatReport } from '../../cloud/store/types.ts';

/** The boot report (seq 1) and the heartbeat (seq 2) of a device running `fw`, its clock at `nowMs`. */
export function simulatedReports(fw: string, nowMs: () => number): { boot: () => BootReport; heartbeat: () => HeartbeatReport } {
  const at = () => new Date(nowMs()).toISOString();
  return {
    boot: () => ({ kind: 'boot', seq: 1, at: at(), up: 3, fw, reason: 'power_on', slot: 'ota_0', ota: 'valid', sv: 0, boots: 1 }),
    heartbeat: () => ({
      kind: 'heartbeat',
      seq: 2,
      at: at(),
      up: 3603,
      fw,
      chunk: 24_576,
      chunk_peak: 40_960,
      slots: 18_432,
      slots_peak: 22_528,
      block: 61_440,
      heap_min: 52_000,
      rssi: -58,
      reboots: 0,
      ota: 'valid',
    }),
  };
}

/** The seqs a device's stored reports must have once it is done. */
export const SIMULATED_SEQS = [2, 1];
