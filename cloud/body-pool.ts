// Upload bodies reused (docs/fleet-scale.md). A 64 KB body read into a fresh Buffer is memory outside
// V8's heap that V8 counts: a worker taking ~1,000 uploads a second allocates ~64 MB a second of it,
// and V8 answers that with a major garbage collection every second or so (marking the whole heap:
// 137 µs of CPU per upload in the cloud against 51 µs in the fair baseline, measured with perf). So
// the backup route reads each body into a buffer of its size class (a power of two from 16 KB) taken
// from here, and gives it back once the store no longer reads it (CloudStore.putBackup resolved). The
// pool holds at most `maxBytes`; a body whose memory the store moved away (the SQLite writer thread)
// is dropped, as is anything not allocated here.

/** Below this a body comes from node's shared slab (Buffer.allocUnsafe): nothing to pool. */
const MIN_POOLED = 16 * 1024;

function sizeClass(size: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(size, MIN_POOLED)));
}

export class BodyPool {
  private readonly free = new Map<number, ArrayBuffer[]>();
  private pooledBytes = 0;

  constructor(readonly maxBytes: number) {}

  /** `size` bytes (uninitialized): a view of a pooled buffer of its size class, or of a new one. */
  take(size: number): Buffer {
    if (size < MIN_POOLED) return Buffer.allocUnsafe(size);
    const cls = sizeClass(size);
    const whole = this.free.get(cls)?.pop();
    if (whole) this.pooledBytes -= cls;
    return Buffer.from(whole ?? new ArrayBuffer(cls), 0, size);
  }

  /** Gives a body back once nothing reads it any more. */
  give(body: Buffer): void {
    const whole = body.buffer;
    const cls = whole.byteLength; // 0 once moved to another thread
    if (!(whole instanceof ArrayBuffer) || body.byteOffset !== 0 || cls < MIN_POOLED || cls !== sizeClass(cls) || this.pooledBytes + cls > this.maxBytes) return;
    let list = this.free.get(cls);
    if (!list) this.free.set(cls, (list = []));
    if (list.includes(whole)) return; // given twice
    list.push(whole);
    this.pooledBytes += cls;
  }

  /** Bytes held for reuse. */
  get bytes(): number {
    return this.pooledBytes;
  }
}
