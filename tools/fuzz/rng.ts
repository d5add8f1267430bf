// A small seeded PRNG for fuzzers and generators that must replay: the same seed gives the same
// sequence on every machine. sfc32 (Chris Doty-Humphrey's Small Fast Counter, as in PractRand),
// seeded through splitmix32 so that nearby seeds give unrelated streams. Not for cryptography.

/** Accepts a number or a string (hashed); returns a 32-bit unsigned seed. */
export function seedFrom(seed: number | string): number {
  if (typeof seed === 'number') return seed >>> 0;
  let h = 0x811c9dc5; // FNV-1a
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function splitmix32(state: number): () => number {
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    const sm = splitmix32(seed >>> 0);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** The next 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[this.int(0, items.length - 1)]!;
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(table: readonly (readonly [number, T])[]): T {
    const total = table.reduce((s, [w]) => s + w, 0);
    let x = this.float() * total;
    for (const [w, v] of table) {
      x -= w;
      if (x < 0) return v;
    }
    return table[table.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i += 4) {
      const v = this.u32();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (v >>> (j * 8)) & 0xff;
    }
    return out;
  }

  /** A string of `n` characters drawn from `alphabet`. */
  string(n: number, alphabet: string): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(0, alphabet.length - 1)];
    return s;
  }

  /** An independent generator derived from this one (for a sub-task that must not shift the main stream). */
  fork(): Rng {
    return new Rng(this.u32());
  }
}
