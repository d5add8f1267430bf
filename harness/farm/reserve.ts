// The harness as a labgrid client: places reserved by tags (CreateReservation, PollReservation until
// allocated, AcquirePlace), each board health-checked before a scenario gets it (a failing one is
// quarantined and another reserved), held under a lease the job renews (a job that dies frees its
// places within LEASE_SECONDS + a tick of the exporter's warden), and released at the end.
//
// labgrid's reservations take one place each, so a job of n boards makes n of them. The boards of a
// job share a radio neighbourhood (the provisioning scenarios need it), so places after the first are
// reserved on the first's `bench`. Two jobs could then each hold what the other waits for: a job that
// does not get its next place within PARTNER_WAIT_MS gives back what it holds, waits a random while,
// and starts again.
import { hostname } from 'node:os';
import type { BoardSpec } from '../rig.ts';
import type { BoardIdentity } from '../serial-board.ts';
import { ClientSession, sessionName } from './client.ts';
import { FarmError } from './errors.ts';
import { RESOURCE_CLASS, serialPortUrl } from './exporter.ts';
import { BoardHealthError, checkHealth, farmBoardSpec } from './health.ts';
import type { Place, Reservation } from './labgrid/messages.ts';
import { HEALTH, LEASE_RENEW_MS, LEASE_TAG, leaseValue, showTags, tagsMatch } from './tags.ts';

export const POLL_MS = 250;
export const PARTNER_WAIT_MS = 15_000;
/** How many boards one reservation may quarantine before the job gives up (the farm is sick). */
export const MAX_QUARANTINES = 3;
const ALLOCATED = 1;

export interface HeldPlace {
  place: string;
  token: string;
  url: string;
  tags: Record<string, string>;
  board: BoardSpec;
  identity: BoardIdentity;
  /** From CreateReservation to AcquirePlace done, health check excluded. */
  waitMs: number;
}

export interface FarmRequest {
  coordinator: string;
  /** One tag set per board, in the rig's order (the first controller is the source). */
  places: Record<string, string>[];
  /** How long to wait for the places in all. */
  waitMs: number;
  say?: (line: string) => void;
  /** Stops a wait under way (SIGINT, SIGTERM): what is held is given back. */
  signal?: AbortSignal;
  /**
   * job (default): a bench job, under a lease it renews; person: `fleet farm reserve`, holding the
   * places under the user's name (host/user, as labgrid-client) until `fleet farm release`.
   */
  holder?: 'job' | 'person';
}

/** A job's session name: the warden holds sessions named so to their leases. */
export function jobSessionName(): string {
  return `${process.env.LG_HOSTNAME ?? hostname()}/fleet-job-${process.pid}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => (clearTimeout(t), signal?.removeEventListener('abort', done), resolve());
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

export class FarmLease {
  readonly held: HeldPlace[] = [];
  /** Every place under this job's lease: held, or acquired and being checked. */
  private readonly leases = new Map<string, string>();
  private renewer: NodeJS.Timeout | undefined;
  private released = false;

  private constructor(
    readonly session: ClientSession,
    private readonly say: (line: string) => void,
    private readonly leased: boolean,
  ) {}

  /** Reserves, acquires and checks the places; on any failure what was taken is given back first. */
  static async take(r: FarmRequest): Promise<FarmLease> {
    const person = r.holder === 'person';
    const session = await ClientSession.start(r.coordinator, person ? sessionName() : jobSessionName());
    const lease = new FarmLease(session, r.say ?? (() => undefined), !person);
    try {
      lease.checkMatches(r.places);
      if (!person) lease.renewer = setInterval(() => void lease.renew(), LEASE_RENEW_MS);
      const deadline = Date.now() + r.waitMs;
      for (;;) {
        if (await lease.takeAll(r, deadline)) return lease;
        await lease.giveBack();
        await sleep(500 + Math.random() * 2500, r.signal);
      }
    } catch (err) {
      await lease.release();
      throw err;
    }
  }

  /** Tags that no place carries would wait for ever: refused at once, naming what the farm has. */
  private checkMatches(requests: Record<string, string>[]): void {
    const places = [...this.session.placesByName.values()];
    for (const tags of requests) {
      if (places.some((p) => tagsMatch(tags, p.tags))) continue;
      const seen = [...new Set(places.map((p) => showTags(Object.fromEntries(Object.entries(p.tags ?? {}).filter(([k]) => k in tags)))))].filter(Boolean);
      throw new FarmError('no_match', `no place on the coordinator at ${this.session.address} has the tags ${showTags(tags)}${seen.length ? ` (its places have ${seen.join('; ')})` : places.length ? '' : ' (it has no places: is an exporter running?)'}`);
    }
  }

  /** One attempt at every place; false when a partner place did not come in time (start again). */
  private async takeAll(r: FarmRequest, deadline: number): Promise<boolean> {
    for (const [i, tags] of r.places.entries()) {
      const filter = { ...tags, health: HEALTH.ok, ...(i > 0 ? { bench: this.held[0]!.tags.bench ?? '' } : {}) };
      const until = i === 0 ? deadline : Math.min(deadline, Date.now() + PARTNER_WAIT_MS);
      const got = await this.takeOne(filter, until, deadline, r.signal);
      if (!got) return false;
    }
    return true;
  }

  /** A place for `filter`: reserved, leased, acquired and checked; a board that fails its check is quarantined and another one taken. */
  private async takeOne(filter: Record<string, string>, until: number, deadline: number, signal?: AbortSignal): Promise<boolean> {
    for (let quarantines = 0; ; ) {
      const t0 = Date.now();
      const created = (await this.session.call('CreateReservation', { filters: { main: { filter } }, prio: 0 })).reservation as Reservation;
      const token = created.token!;
      let res: Reservation = created;
      while (res.state !== ALLOCATED) {
        if (signal?.aborted) return (await this.cancel(token), Promise.reject(new FarmError('not_allocated', `interrupted while waiting for a place with ${showTags(filter)}`)));
        if (Date.now() > until) {
          await this.cancel(token);
          if (Date.now() > deadline) throw new FarmError('not_allocated', `no place with ${showTags(filter)} was free in time on the coordinator at ${this.session.address} (fleet farm places shows who holds them); wait longer with --farm-wait`);
          return false;
        }
        await sleep(POLL_MS, signal);
        res = (await this.session.call('PollReservation', { token })).reservation as Reservation;
      }
      const place = Object.values(res.allocations ?? {})[0] as unknown as string;
      // The lease first: from here on, a job that dies frees this place.
      if (this.leased) {
        this.leases.set(place, token);
        await this.session.call('SetPlaceTags', { placename: place, tags: { [LEASE_TAG]: leaseValue(token) } });
      }
      try {
        await this.session.call('AcquirePlace', { placename: place });
      } catch (err) {
        // Refused by its exporter (quarantined meanwhile) or taken by hand: another one.
        this.say(`farm: ${place} refused: ${(err as Error).message}`);
        await this.cancel(token, place);
        continue;
      }
      const waitMs = Date.now() - t0;
      await this.session.sync();
      const p = this.session.placesByName.get(place) ?? ({ name: place } as Place);
      const url = this.session.resourcesOf(p).map(serialPortUrl).find(Boolean);
      const tags = { ...(p.tags ?? {}) };
      if (!url) {
        await this.releaseOne(place, token);
        throw new FarmError('refused', `place ${place} has no ${RESOURCE_CLASS} resource (is its exporter running?)`);
      }
      const board = farmBoardSpec(place, url, tags);
      this.say(`farm: acquired ${place} (${url}) after ${(waitMs / 1000).toFixed(1)} s; health check`);
      try {
        const identity = await checkHealth(board, tags.mac);
        this.held.push({ place, token, url, tags, board, identity, waitMs });
        return true;
      } catch (err) {
        if (!(err instanceof BoardHealthError)) throw err;
        await this.quarantine(place, token, err.message);
        if (++quarantines >= MAX_QUARANTINES) throw new FarmError('refused', `${quarantines} boards with ${showTags(filter)} failed their health check and were quarantined; the last: ${err.message}`);
      }
    }
  }

  /** Marks the place quarantined with the reason and gives it back: it is refused from now on, until its exporter repairs it. */
  private async quarantine(place: string, token: string, reason: string): Promise<void> {
    this.say(`farm: ${reason}: quarantining ${place}`);
    await this.session.call('SetPlaceTags', { placename: place, tags: { health: HEALTH.quarantined } });
    await this.session.call('SetPlaceComment', { placename: place, comment: `quarantined by ${this.session.name} at ${new Date().toISOString()}: ${reason}` });
    await this.releaseOne(place, token);
  }

  private async cancel(token: string, place?: string): Promise<void> {
    await this.session.call('CancelReservation', { token }).catch(() => undefined);
    if (place) this.leases.delete(place);
    if (place) await this.session.call('SetPlaceTags', { placename: place, tags: { [LEASE_TAG]: '' } }).catch(() => undefined);
  }

  private async releaseOne(place: string, token: string): Promise<void> {
    await this.session.call('ReleasePlace', { placename: place, fromuser: this.session.name }).catch(() => undefined);
    await this.cancel(token, place);
  }

  private async renew(): Promise<void> {
    for (const [place, token] of this.leases) await this.session.call('SetPlaceTags', { placename: place, tags: { [LEASE_TAG]: leaseValue(token) } }).catch((err) => this.say(`farm: renewing the lease of ${place}: ${(err as Error).message}`));
  }

  private async giveBack(): Promise<void> {
    const held = this.held.splice(0);
    for (const h of held) await this.releaseOne(h.place, h.token);
  }

  /** Released, reservations cancelled, leases removed; the session closed. Safe to call twice. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.renewer);
    await this.giveBack();
    this.session.close();
  }

  /** A person's places stay held after the command ends (fleet farm release gives them back). */
  keep(): void {
    this.released = true;
    clearInterval(this.renewer);
    this.session.close();
  }

  /** The boards for the rig, with what their health checks read (their first prepare starts from it). */
  identified(): Map<string, BoardIdentity> {
    return new Map(this.held.map((h) => [h.url, h.identity]));
  }
}
