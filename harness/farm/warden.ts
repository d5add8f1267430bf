// What an exporter looks after on its own places, besides serving their ports (one tick a second):
// - leases: a job (fleet bench --farm) keeps a `lease` tag on each place it holds and renews it; a
//   lease that ended means the job died, so its place is released and its reservation cancelled.
//   The coordinator does neither when a client's session ends (its AcquirePlace keeps the holder's
//   name, not the session), and it keeps an allocated reservation for 60 s after its last poll.
//   A job's reservation allocated here without a lease for GRACE_MS is one whose job died waiting.
// - quarantine: a place tagged `health=quarantined` is refused (exporter.ts) and, once nobody holds
//   it, repaired: the rig's image flashed again, the board reset and checked; it is handed out again
//   (`health=ok`) only after a passing check.
import type { CoordinatorChannel } from './client.ts';
import type { Place, Reservation } from './labgrid/messages.ts';
import { HEALTH, JOB_SESSION, LEASE_TAG, parseLease } from './tags.ts';
import { describeError } from '../bench.ts';

export const TICK_MS = 1000;
export const GRACE_MS = 10_000;
export const REPAIR_RETRY_MS = 30_000;

export interface WardedPlace {
  /** The board's resource group on this exporter. */
  group: string;
  /** Reflash, reset and check; throws with the reason when the board still fails. */
  repair(): Promise<void>;
}

export class Warden {
  /** Groups refused now (quarantined), for the exporter's set_acquired answers. */
  readonly quarantined = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly unleasedSince = new Map<string, number>();
  private readonly repairing = new Set<string>();
  private readonly nextRepair = new Map<string, number>();

  constructor(
    private readonly channel: CoordinatorChannel,
    private readonly places: Map<string, WardedPlace>,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.tick().catch((err) => this.log(`warden: ${describeError(err)}`)).finally(() => (this.running = undefined));
    }, TICK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Whether a place's current holder has let its lease end (or its job never took one). */
  private abandoned(place: Place, reservations: Map<string, Reservation>, now: number): boolean {
    const lease = parseLease(place.tags?.[LEASE_TAG]);
    const token = place.reservation || undefined;
    if (lease && (lease.token === token || (!token && place.acquired))) return lease.endsMs < now;
    const owner = token ? reservations.get(token)?.owner : undefined;
    if (!token || !owner || !JOB_SESSION.test(owner)) return this.unleasedSince.delete(place.name!), false;
    const key = `${place.name}/${token}`;
    const since = this.unleasedSince.get(key) ?? now;
    this.unleasedSince.set(key, since);
    return now - since > GRACE_MS;
  }

  async tick(now = Date.now()): Promise<void> {
    const [places, res] = await Promise.all([this.channel.places(), this.channel.call('GetReservations', {})]);
    const reservations = new Map<string, Reservation>(((res.reservations ?? []) as Reservation[]).map((r) => [r.token!, r]));
    for (const place of places) {
      const mine = this.places.get(place.name ?? '');
      if (!mine) continue;
      if (place.tags?.health === HEALTH.quarantined) this.quarantined.add(mine.group);
      else this.quarantined.delete(mine.group);
      if (this.abandoned(place, reservations, now)) await this.reap(place);
      else if (this.quarantined.has(mine.group) && !place.acquired && !this.repairing.has(mine.group) && now >= (this.nextRepair.get(mine.group) ?? 0)) void this.repair(place.name!, mine);
    }
  }

  /** Frees a place whose job is gone: released from its holder, its reservation cancelled, the lease removed. */
  private async reap(place: Place): Promise<void> {
    const name = place.name!;
    this.log(`warden: ${name}: ${place.acquired ? `held by ${place.acquired}` : 'reserved'} past its lease: releasing it`);
    if (place.acquired) await this.channel.call('ReleasePlace', { placename: name, fromuser: place.acquired }).catch((err) => this.log(`warden: ${name}: ${describeError(err)}`));
    if (place.reservation) await this.channel.call('CancelReservation', { token: place.reservation }).catch(() => undefined);
    await this.channel.call('SetPlaceTags', { placename: name, tags: { [LEASE_TAG]: '' } });
    this.unleasedSince.delete(`${name}/${place.reservation}`);
  }

  private async repair(name: string, place: WardedPlace): Promise<void> {
    this.repairing.add(place.group);
    const comment = (text: string) => this.channel.call('SetPlaceComment', { placename: name, comment: text }).catch(() => undefined);
    try {
      this.log(`warden: ${name}: quarantined: reflashing, resetting and checking it`);
      await comment(`quarantined; repair under way since ${new Date().toISOString()}`);
      await place.repair();
      await this.channel.call('SetPlaceTags', { placename: name, tags: { health: HEALTH.ok } });
      await comment('');
      this.quarantined.delete(place.group);
      this.log(`warden: ${name}: repaired, passed its health check: handed out again`);
    } catch (err) {
      this.nextRepair.set(place.group, Date.now() + REPAIR_RETRY_MS);
      this.log(`warden: ${name}: repair failed: ${describeError(err)}`);
      await comment(`quarantined; repair failed at ${new Date().toISOString()}: ${describeError(err)}; next try in ${REPAIR_RETRY_MS / 1000} s`);
    } finally {
      this.repairing.delete(place.group);
    }
  }
}
