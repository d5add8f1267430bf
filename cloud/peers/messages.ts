// The messages between the supervisor of a `fleet serve` and its workers, over node:cluster's IPC
// channel (docs/cloud-workers.md): one typed list, in both directions. A worker never talks to another
// worker directly: the supervisor relays a broadcast and tells its sender when every other worker has
// applied it.
import type { ReleaseTrack } from '../store/types.ts';

/** The environment variable that gives a worker its slot, 1 to WORKERS (a restarted worker takes its slot again). */
export const WORKER_SLOT_ENV = 'FLEET_WORKER_SLOT';

/** What one worker tells the others: a change they must apply before the change is answered. */
export type PeerEvent =
  /** A release track changed (release, revocation, rollout, groups): forget its cached answers; null: every track. */
  | { kind: 'ota-changed'; track: ReleaseTrack | null }
  /** An appconfig deployment or deletion: read the deployed log levels again. */
  | { kind: 'log-levels-changed' };

/** What a worker counted while it served, sent once as it stops. */
export interface WorkerStats {
  /** SQLite statements or transactions refused with SQLITE_BUSY (another process held the write lock), each tried again. */
  sqliteBusy: number;
  /** Store calls that waited for the lock, the longest such wait (ms), and the transactions that ran waiting writes together. */
  sqliteBusyCalls: number;
  sqliteBusyMaxWaitMs: number;
  sqliteBusyBatches: number;
  /** Store calls refused after waiting the whole busy time-out (the request answered 503). */
  sqliteBusyGaveUp: number;
  /** Connections closed with a request still in flight at the shutdown time-out. */
  cutAtShutdown: number;
  /** The admission gates' refusals (503 store_saturated: queue full, or waited too long) and the longest Retry-After given, s. */
  uploadRefused: number;
  storeRefused: number;
  maxRetryAfterSeconds: number;
}

export type WorkerMessage =
  | { t: 'broadcast'; id: number; event: PeerEvent }
  | { t: 'applied'; id: number }
  /** Start-up failed for a reason that restarting cannot fix (a port in use, a bad store): the supervisor stops. */
  | { t: 'fatal'; message: string; exitCode: number }
  | { t: 'stopped'; stats: WorkerStats };

export type SupervisorMessage =
  /** Another worker's event, to apply and acknowledge with `applied` and the same id. */
  | { t: 'event'; id: number; event: PeerEvent }
  /** Every other worker applied the sender's broadcast `id` (or the wait for them ran out). */
  | { t: 'broadcast-done'; id: number }
  /** Stop: finish the requests in flight (up to the shutdown time-out), close the store, exit 0. */
  | { t: 'shutdown' };

export function isWorkerMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string' && ['broadcast', 'applied', 'fatal', 'stopped'].includes((m as { t: string }).t);
}

export function isSupervisorMessage(m: unknown): m is SupervisorMessage {
  return typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string' && ['event', 'broadcast-done', 'shutdown'].includes((m as { t: string }).t);
}
