// The device inventory's OTA half (docs/device-inventory.md): every check that names its device
// (X-Device-UUID) is kept in memory and written to the store in batches, off the check's path (the OTA
// check stays the fast path it is, docs/ota-fast-path.md). A flush also settles update outcomes: a
// device that was offered a version and checks again reporting it succeeded; one that reports the
// version it was offered the update from failed. A release whose rollout reaches its error threshold
// is paused (cloud/ota/rollouts.ts).
import type { FunctionLogger } from '../logging.ts';
import type { CloudStore, OtaCheckState, OtaCheckWrite, ReleaseTrack } from '../store/types.ts';
import type { OtaCheckSeen } from './service.ts';

/** Checks kept between two flushes; past this, new ones are counted as dropped (junk UUIDs cannot grow memory). */
export const MAX_PENDING_CHECKS = 50_000;

export interface SettledRelease {
  track: ReleaseTrack;
  version: string;
}

const sameTrack = (a: ReleaseTrack, b: ReleaseTrack) => a.class === b.class && a.productHex === b.productHex && a.application === b.application;

/** What one check writes, given what the inventory held for the device before it. */
export function checkWrite(state: OtaCheckState, seen: OtaCheckSeen, at: string): OtaCheckWrite {
  let outcome: OtaCheckWrite['outcome'] = null;
  const offer = state.offer;
  if (offer && sameTrack(offer.track, seen.track)) {
    if (seen.version === offer.version) outcome = { track: offer.track, version: offer.version, result: 'succeeded' };
    else if (seen.version === offer.fromVersion) outcome = { track: offer.track, version: offer.version, result: 'failed' };
  }
  return {
    uuid: seen.uuid,
    at,
    version: seen.version,
    track: seen.track,
    offer: seen.offered === undefined ? null : { version: seen.offered, fromVersion: seen.version },
    outcome,
  };
}

export class OtaCheckRecorder {
  private pending: { seen: OtaCheckSeen; atMs: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  dropped = 0;

  constructor(
    private readonly store: CloudStore,
    private readonly log: FunctionLogger,
    private readonly now: () => number,
    /** Called after a flush with the releases that got a failed outcome. */
    private readonly onFailures: (releases: SettledRelease[]) => Promise<void>,
  ) {}

  record(seen: OtaCheckSeen): void {
    if (this.pending.length >= MAX_PENDING_CHECKS) {
      this.dropped++;
      return;
    }
    this.pending.push({ seen, atMs: this.now() });
  }

  start(everyMs: number): void {
    this.timer = setInterval(() => {
      this.flush().catch((err: unknown) => this.log.error('inventory flush failed', { error: err instanceof Error ? err.message : String(err) }));
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush().catch(() => undefined);
  }

  /** Writes what was seen since the last flush (one at a time: a flush waits for the one running). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.write(batch).finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  private async write(batch: { seen: OtaCheckSeen; atMs: number }[]): Promise<void> {
    const states = await this.store.getOtaCheckStates([...new Set(batch.map((b) => b.seen.uuid))]);
    const writes: OtaCheckWrite[] = [];
    const failed = new Map<string, SettledRelease>();
    for (const { seen, atMs } of batch) {
      const state = states.get(seen.uuid);
      if (!state) continue; // not enrolled
      const at = new Date(atMs).toISOString();
      const write = checkWrite(state, seen, at);
      writes.push(write);
      if (write.outcome?.result === 'failed') failed.set(`${seen.track.class}/${seen.track.productHex}/${seen.track.application}/${write.outcome.version}`, { track: write.outcome.track, version: write.outcome.version });
      // The next check of the same device in this batch sees what this one left.
      states.set(seen.uuid, { uuid: seen.uuid, lastCheckAt: at, offer: write.offer ? { track: seen.track, version: write.offer.version, fromVersion: write.offer.fromVersion, at } : null });
    }
    if (writes.length === 0) return;
    await this.store.recordOtaChecks(writes);
    if (failed.size > 0) await this.onFailures([...failed.values()]);
  }
}
