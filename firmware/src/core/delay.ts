// Waiting without blocking the board: a promise the board's timers resolve.
import type { Hal } from '../hal/index.ts';

export function delay(hal: Pick<Hal, 'timers'>, ms: number): Promise<void> {
  return new Promise((resolve) => hal.timers.setTimeout(resolve, ms));
}
