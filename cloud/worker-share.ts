// What each worker of a `fleet serve` may hold (docs/cloud-workers.md). The bounds that keep the
// whole service's memory, its queues and its log output in check are the service's: each worker gets
// its share, so a serve of N workers holds what one process held before, whatever N. The admission
// gates are divided rather than shared: sharing them would cost an IPC round trip per request.
import type { HttpLimits } from './limits.ts';

/** A worker's share of a bound of the whole service (at least `min`; 0 stays 0, a switch-off). */
export function workerShare(total: number, workers: number, min = 1): number {
  if (workers <= 1 || total === 0) return total;
  return Math.max(min, Math.ceil(total / workers));
}

/** The gates' bounds of one worker: at work and queued, for the store and for upload bodies. */
export function workerLimits(limits: HttpLimits, workers: number): HttpLimits {
  return {
    ...limits,
    storeMaxActive: workerShare(limits.storeMaxActive, workers),
    storeMaxQueued: workerShare(limits.storeMaxQueued, workers, 0),
    uploadMaxActive: workerShare(limits.uploadMaxActive, workers),
    uploadMaxQueued: workerShare(limits.uploadMaxQueued, workers, 0),
  };
}
