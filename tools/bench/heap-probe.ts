// How much chunk heap an operation needs at its peak, measured on the real engine. xsnap starts XS
// with 32 MiB of chunks, so meterUsage.allocate (which only moves when a heap grows) stays flat for
// anything small. The probe fills the heap with live ballast until only `headroom` bytes are free,
// then runs the operation: if the engine has to grow its heap, the operation's live data exceeded the
// headroom at some moment (garbage is collected first). Repeating with several headrooms brackets the
// peak. Granularity: 16 KB.
import type { XsBoard } from '../../firmware/virtual-esp32/xs-board.ts';

const STEP_KB = 16;
const INCREMENT_KB = 4 * 1024; // xsnap's incremental chunk size

async function fillUntilGrowth(board: XsBoard, kb: number, limit: number): Promise<void> {
  let last = (await board.evaluate('1')).allocate;
  for (let i = 0; i < limit; i++) {
    const now = (await board.evaluate(`__ballast.push(new Uint8Array(${kb * 1024}))`)).allocate;
    if (now !== last) return;
    last = now;
  }
  throw new Error('the heap never grew while filling it');
}

/** Leaves about `headroomKb` (to +16 KB) of free chunk heap, held by live ballast. */
export async function leaveHeadroom(board: XsBoard, headroomKb: number): Promise<void> {
  await board.evaluate('globalThis.__ballast = []; gc();');
  // Coarse pieces until the heap grows, then fine ones until it grows again: then the free space is
  // one increment less the last fine piece (the chunk heap is compacting, so no holes are left).
  await fillUntilGrowth(board, INCREMENT_KB, 100_000);
  await fillUntilGrowth(board, STEP_KB, 2 * INCREMENT_KB / STEP_KB + 16);
  const pieces = Math.floor((INCREMENT_KB - STEP_KB - headroomKb) / STEP_KB);
  await board.evaluate(`for (let i = 0; i < ${pieces}; i++) __ballast.push(new Uint8Array(${STEP_KB * 1024}))`);
}

export async function dropBallast(board: XsBoard): Promise<void> {
  await board.evaluate('globalThis.__ballast = []; gc();');
}

export interface ProbeCase {
  /** Runs before the heap is filled (not measured): e.g. put a fresh backup to push. */
  prepare?: () => Promise<unknown>;
  work: () => Promise<unknown>;
}

/** True when `work` ran within `headroomKb` of free chunk heap (no heap growth). */
export async function fitsIn(board: XsBoard, headroomKb: number, c: ProbeCase): Promise<boolean> {
  await c.prepare?.();
  await board.idle();
  await leaveHeadroom(board, headroomKb);
  const work = c.work;
  const before = (await board.evaluate('1')).allocate;
  await work();
  await board.idle();
  const after = (await board.evaluate('1')).allocate;
  await dropBallast(board);
  return after === before;
}

/** The smallest of the given headrooms (KB) in which `work` fits, or null if none. */
/** Binary search over increasing headrooms (a case that fits in h fits in any larger one). */
export async function smallestFit(board: XsBoard, headroomsKb: number[], c: ProbeCase): Promise<number | null> {
  let lo = 0;
  let hi = headroomsKb.length - 1;
  let best: number | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (await fitsIn(board, headroomsKb[mid]!, c)) {
      best = headroomsKb[mid]!;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return best;
}

export const HEADROOMS_KB = [16, 32, 48, 64, 79, 128, 256, 1024];
