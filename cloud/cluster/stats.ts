// What a serve counted while it ran, said once as it stops (docs/cloud-workers.md): for each worker
// (or the one process of WORKERS=1), SQLITE_BUSY met and waited out, connections cut at the shutdown
// time-out, and the admission gates' refusals; summed into one `stopped: …` line on stderr.
import type { RunningCloud } from '../server.ts';
import type { WorkerStats } from '../peers/messages.ts';

export function workerStats(running: RunningCloud, cut: number): WorkerStats {
  const busy = running.store.stats();
  const gates = running.cloud.gates();
  return {
    sqliteBusy: busy.busy,
    sqliteBusyCalls: busy.calls,
    sqliteBusyMaxWaitMs: Math.round(busy.maxWaitMs),
    sqliteBusyBatches: busy.batches,
    sqliteBusyGaveUp: busy.gaveUp,
    cutAtShutdown: cut,
    uploadRefused: gates.upload.refusedFull + gates.upload.refusedWait,
    storeRefused: gates.store.refusedFull + gates.store.refusedWait,
    maxRetryAfterSeconds: Math.max(gates.upload.maxRetryAfterSeconds, gates.store.maxRetryAfterSeconds),
  };
}

export function stoppedLine(stats: WorkerStats[], workers: number, storeKind: string): string {
  const sum = (k: keyof WorkerStats) => stats.reduce((a, s) => a + s[k], 0);
  const max = (k: keyof WorkerStats) => Math.max(0, ...stats.map((s) => s[k]));
  const busy =
    storeKind === 'sqlite'
      ? `; SQLITE_BUSY ${sum('sqliteBusy')} times, ${sum('sqliteBusyCalls')} store calls waited for the lock (run in ${sum('sqliteBusyBatches')} transactions), longest wait ${max('sqliteBusyMaxWaitMs')} ms, ${sum('sqliteBusyGaveUp')} given up`
      : '';
  const refused = `; 503 store_saturated: ${sum('uploadRefused')} uploads, ${sum('storeRefused')} store calls (longest Retry-After ${max('maxRetryAfterSeconds')} s)`;
  return `stopped: ${stats.length} of ${workers} worker${workers === 1 ? '' : 's'} stopped cleanly, ${sum('cutAtShutdown')} connections cut at the time-out${busy}${refused}`;
}
