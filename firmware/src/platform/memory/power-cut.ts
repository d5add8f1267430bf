// Power cuts for a virtual flash (MemoryStorage here, FlashFolder on a virtual board): a seeded
// switch that cuts the power during the n-th mutating storage operation (create, write, close,
// rename, remove) and then stays off, so every further operation throws, as on a board without
// power. What a cut leaves on the flash is decided by the flash (docs/storage.md, "Power cuts").
// Portable: no Node APIs, so the memory platform keeps running inside XS too.

export class PowerCutError extends Error {
  override name = 'PowerCutError';
}

export type MutatingOp = 'create' | 'write' | 'close' | 'rename' | 'remove';

export class PowerSwitch {
  /** Mutating operations since the last arm() or restore(). */
  ops = 0;
  /** Set once the power has been cut: the operation and the path it was cut in. */
  cut: { op: MutatingOp; path: string; at: number } | null = null;
  private cutAt: number | null = null;
  private s0: number;
  private s1: number;

  constructor(seed = 1) {
    this.s0 = (seed >>> 0) || 1;
    this.s1 = (0x9e3779b9 ^ this.s0) >>> 0 || 1;
  }

  get off(): boolean {
    return this.cut !== null;
  }

  /** Cut the power during the n-th mutating operation from now (1-based); null never cuts. */
  arm(n: number | null): void {
    this.ops = 0;
    this.cutAt = n;
  }

  /** Power back on (the board boots again): operations work, nothing is armed. */
  restore(): void {
    this.cut = null;
    this.cutAt = null;
    this.ops = 0;
  }

  /** Before any operation: throws while the power is off. */
  check(): void {
    if (this.cut) throw new PowerCutError(`no power (cut during ${this.cut.op} ${this.cut.path})`);
  }

  /** Before a mutating operation: throws while off; true when the power goes during this one. */
  step(op: MutatingOp, path: string): boolean {
    this.check();
    this.ops++;
    if (this.cutAt === null || this.ops !== this.cutAt) return false;
    this.cut = { op, path, at: this.ops };
    return true;
  }

  /** The error the cut operation throws (after the flash has applied what the cut leaves). */
  error(): PowerCutError {
    return new PowerCutError(`power cut during ${this.cut?.op} ${this.cut?.path}`);
  }

  /** A seeded integer in [0, n) (xorshift128+), for what a cut leaves behind. */
  pick(n: number): number {
    let x = this.s0;
    const y = this.s1;
    this.s0 = y;
    x ^= x << 23;
    x ^= x >>> 17;
    x ^= y ^ (y >>> 26);
    this.s1 = x >>> 0;
    return ((this.s0 + this.s1) >>> 0) % Math.max(1, n);
  }
}
