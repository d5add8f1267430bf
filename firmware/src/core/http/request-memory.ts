// The board's request memory (hal/network.ts RequestMemory): what the requests a board has not answered
// yet may hold of its heap, all interfaces together. The listeners take from it each connection and
// every byte of its head as it arrives, the core the bodies it reads whole (records and small JSON
// requests: readSmallBody); a backup (PUT /backup) streams to flash and is not counted. Past it a
// request is refused with 503 board_busy and Retry-After, and the board never runs out of memory for
// what a client sends before it has logged in (docs/board-http-limits.md, "One budget").

/**
 * 24 KB of the chip's 78,848-byte chunk heap: a 16 KB record read whole with its head, and a few small
 * requests or unfinished heads beside it, while the rest of the firmware (about 20 KB live serving a
 * provisioning target) keeps a quarter of the heap free (the worst case measured: docs/board-http-limits.md).
 */
export const REQUEST_MEMORY_BYTES = 24 * 1024;

export class RequestBudget {
  private held = 0;

  constructor(readonly bytes: number) {}

  /** Takes `n` bytes of the budget; false when they are not there. */
  take(n: number): boolean {
    if (this.held + n > this.bytes) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held = Math.max(0, this.held - n);
  }

  /** Bytes held now (for tests and the bench). */
  inUse(): number {
    return this.held;
  }
}
