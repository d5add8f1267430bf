// A board that resets too often stays down, as a bench treats a boot loop: more than MAX_RESETS
// resets within RESET_WINDOW_MS.
const MAX_RESETS = 5;
const RESET_WINDOW_MS = 60_000;

export class ResetCounter {
  private readonly resets: number[] = [];

  /** Counts a reset; says why the board now stays down, or undefined while it may start again. */
  count(now = Date.now()): string | undefined {
    while (this.resets.length > 0 && now - this.resets[0]! > RESET_WINDOW_MS) this.resets.shift();
    this.resets.push(now);
    if (this.resets.length <= MAX_RESETS) return undefined;
    return `${this.resets.length} resets within ${RESET_WINDOW_MS / 1000} s: the board stays down`;
  }
}
