// The bench's probes of a virtual board's firmware process: the most its heaps held live across the
// task watchdog's samples (a collection first when the owner asked for samples), and its CPU time from
// /proc. What a chip's debugger or a bench meter reads; the board only wires them.
import { readFileSync } from 'node:fs';
import type { HeapFigures } from '../firmware-process.ts';

export interface HeapLive {
  chunkBytes: number;
  slots: number;
  stackSlots: number;
  samples: number;
}

/** The peaks of the samples since the firmware started. */
export function emptyHeapLive(): HeapLive {
  return { chunkBytes: 0, slots: 0, stackSlots: 0, samples: 0 };
}

/** Takes one sample into the peaks. */
export function takeHeapSample(live: HeapLive, figures: HeapFigures): void {
  live.chunkBytes = Math.max(live.chunkBytes, figures.chunkBytes);
  live.slots = Math.max(live.slots, figures.slots);
  live.stackSlots = Math.max(live.stackSlots, figures.stackPeak);
  live.samples++;
}

/** A process's CPU time so far, in milliseconds (utime + stime); 0 once it is gone. */
export function processCpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
  } catch {
    return 0;
  }
}
