// The limits a board's listeners keep, the same as a virtual board's host (docs/board-http-limits.md),
// so that a scenario written once behaves the same on both.
export interface ListenerLimits {
  /** Request line and headers together. */
  headBytes: number;
  /** One header line (what a line costs while it arrives; ESP-IDF's httpd allows 512 bytes). */
  headerLineBytes: number;
  headTimeoutMs: number;
  /** From the end of the head to the last body byte. */
  bodyTimeoutMs: number;
  maxBodyBytes: number;
  targetBytes: number;
  /** A response that makes no progress this long (the client stopped reading) is dropped. */
  idleMs: number;
  /** The largest body piece handed to the core at once, as the virtual boards' NET_CHUNK_BYTES. */
  chunkBytes: number;
  /** After a response, how long to wait for its acknowledgement before closing. */
  lingerMs: number;
  /** Requests in progress per interface; more get 503 board_busy (lwIP keeps 16 TCP PCBs in all). */
  pendingPerInterface: number;
}

export const BOARD_HTTP_LIMITS: Readonly<ListenerLimits> = Object.freeze({
  headBytes: 8192,
  headerLineBytes: 2048,
  headTimeoutMs: 10_000,
  bodyTimeoutMs: 15_000,
  maxBodyBytes: 1_048_576,
  targetBytes: 1024,
  idleMs: 30_000,
  chunkBytes: 4096,
  lingerMs: 2_000,
  pendingPerInterface: 8,
});
