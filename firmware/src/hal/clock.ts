// Wall clock and timers. On a board the wall clock is set by SNTP; until then it is not synchronized
// and nothing that signs a timestamp may run (spec 7: 503).

export interface Clock {
  /** Milliseconds since the epoch (may be wrong until synchronized). */
  now(): number;
  /**
   * Milliseconds since boot, never set: what expiries and throttles count in. The wall clock jumps
   * when SNTP first answers (from the epoch at boot to today), which would end every token issued
   * before it.
   */
  uptime(): number;
  synchronized(): boolean;
}

export interface Timers {
  setTimeout(callback: () => void, delayMs: number): number;
  clearTimeout(id: number): void;
}
