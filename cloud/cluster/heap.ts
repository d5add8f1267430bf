// The V8 heap of a serve's worker (docs/fleet-scale.md, round 5). Under a stream of 64 KB uploads a
// worker's young generation grows to V8's largest (16 MB semi-spaces), and the socket chunks' buffers
// (external memory, freed only by a collection) count against the old generation's limit, which V8
// sets from the live heap (~15 MB in a worker: Express, the compiled schemas, the caches). Once the
// room left under that limit is less than the young generation, V8 starts marking the whole heap at
// once after every collection: a full mark-compact every 60–150 ms, ~130 µs of GC threads' CPU per
// upload, measured (the fair server, with a small heap and young generation, never reached it). A
// larger initial old generation leaves the room: measured at 1,500 uploads/s on one process, CPU per
// upload 430 µs without, 340 µs with 64 MB, 316 µs with 128 MB, ~330 µs with 256 MB (the fair
// server ~280 µs). It is a starting limit, not a reservation: memory is taken as the heap grows.
/** The worker's initial old generation, MB. */
export const INITIAL_OLD_SPACE_MB = 128;

/** node flags for a worker: `execArgv` with the initial old generation, unless it sizes the heap itself. */
export function withWorkerHeap(execArgv: readonly string[]): string[] {
  if (execArgv.some((a) => /^--(initial-old-space-size|initial-heap-size)(=|$)/.test(a))) return [...execArgv];
  return [...execArgv, `--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`];
}
