// What a store counts as it runs (CloudStore.stats()), in a file of its own: the SQLite store's line of
// waits (sqlite-busy.ts) keeps the counts, below the contract that names them.

/**
 * What a store counted since it opened, said once as a serve stops (docs/cloud-workers.md): its waits
 * for another process's write lock. SQLite answers SQLITE_BUSY and the store waits itself
 * (cloud/store/sqlite-busy.ts); PostgreSQL's server makes a statement wait for its locks, so its store
 * counts none.
 */
export interface StoreStats {
  /** Statements or transactions refused with SQLITE_BUSY, each tried again. */
  busy: number;
  /** Store calls that waited for another process's write lock, and the longest time one waited, ms. */
  calls: number;
  maxWaitMs: number;
  /** Transactions that ran a line of waiting writes together, once the lock was had. */
  batches: number;
  /** Store calls refused after the longest wait (answered 503). */
  gaveUp: number;
}
