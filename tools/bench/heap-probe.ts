// What an operation costs a virtual board's firmware, from the firmware's own XS counters
// (SdkBoard.heap: the chunk heap's bytes and the slot heap's slots, current, peak and maximum, and the
// JavaScript stack's peak; the board's creation is the esp32s3's, 78,848 chunk bytes, 4,927 slots,
// 512 stack slots) and from the host (the firmware process's CPU time, the wall clock).
//
// XS collects garbage only when a heap is full, so its peaks include garbage: on a board that has
// run a while the chunk and slot peaks sit at the heap's size. What an operation holds live is
// sampled instead: with `sampleMs`, a heap probe that collects first is sent every `sampleMs` while
// the operation runs, and answered by the firmware's main loop between two of its events (a socket's
// data, a timer): the most live in any sample. Those collections cost CPU, so a timing run goes
// without them. The stack's peak is XS's own (the instrumented build): exact, no sampling.
import type { SdkBoard } from '../../harness/virtual-board.ts';

export interface CaseFigures {
  wallMs: number;
  /** The firmware process's CPU time over the case (10 ms ticks). */
  cpuMs: number;
  /** This Node process's CPU time over the case: the chip beneath the firmware and the client. */
  nodeCpuMs: number;
  /** The most the heaps held live (after a collection) in any sample during the case; 0 without sampling. */
  liveChunkBytes: number;
  liveSlots: number;
  samples: number;
  /** XS's chunk peak over the case, garbage included. */
  chunkPeakBytes: number;
  /** The deepest the JavaScript stack went during the case, in slots (of stackMax). */
  stackPeak: number;
  stackMax: number;
  /** Live before and after the case (after a collection). */
  before: { chunkBytes: number; slots: number };
  after: { chunkBytes: number; slots: number };
}

/**
 * Runs `work` on the board and measures it. The peaks start from what is live when it starts (a
 * collection first, outside the measured CPU time).
 */
export async function measure(board: SdkBoard, work: () => Promise<unknown>, o: { sampleMs?: number } = {}): Promise<CaseFigures> {
  const before = await board.heap({ collect: true, resetPeaks: true });
  let live = { chunkBytes: before.chunkBytes, slots: before.slots };
  let samples = 0;
  let running = true;
  const sampler = (async () => {
    if (o.sampleMs === undefined) return;
    while (running) {
      const f = await board.heap({ collect: true }).catch(() => undefined);
      if (f) {
        live = { chunkBytes: Math.max(live.chunkBytes, f.chunkBytes), slots: Math.max(live.slots, f.slots) };
        samples++;
      }
      if (running) await new Promise((r) => setTimeout(r, o.sampleMs));
    }
  })();
  const cpu0 = board.cpuMs();
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    await work();
  } finally {
    running = false;
    await sampler;
  }
  const wallMs = performance.now() - t0;
  const cpuMs = board.cpuMs() - cpu0;
  const node = process.cpuUsage(node0);
  const peaks = await board.heap();
  const after = await board.heap({ collect: true });
  return {
    wallMs,
    cpuMs,
    nodeCpuMs: (node.user + node.system) / 1000,
    liveChunkBytes: o.sampleMs === undefined ? 0 : live.chunkBytes,
    liveSlots: o.sampleMs === undefined ? 0 : live.slots,
    samples,
    chunkPeakBytes: peaks.chunkPeakBytes,
    stackPeak: peaks.stackPeak,
    stackMax: peaks.stackMax,
    before: { chunkBytes: before.chunkBytes, slots: before.slots },
    after: { chunkBytes: after.chunkBytes, slots: after.slots },
  };
}

/** Latencies of `n` requests made one after another (or `concurrency` at a time): req/s and percentiles. */
export async function throughput(n: number, request: () => Promise<unknown>, concurrency = 1): Promise<{ requests: number; seconds: number; perSecond: number; p50Ms: number; p99Ms: number; maxMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const t = performance.now();
        await request();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!;
  return { requests: n, seconds, perSecond: n / seconds, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: latencies[latencies.length - 1]! };
}
