// Admission gates: a bounded number of operations at work, a bounded queue behind them, a bounded wait
// in that queue. Past any bound the caller gets 503 `store_saturated` with Retry-After instead of
// joining an unbounded queue (docs/fleet-scale.md). Used in front of the store (every route's store
// calls) and in front of backup bodies (what an upload holds in memory).
//
// The Retry-After of a refusal spreads the herd instead of sending it all back at the same second:
// the gate measures how fast it drains (grants per second over the last few seconds) and gives each
// refused caller the next free "return slot" on a virtual schedule, one slot per 1/rate seconds:
// each grant frees a place in the queue, so the refused come back about as fast as places free up,
// the queue stays fed and nobody is told to wait longer than that. (A first version put the slots
// after the whole queue's drain time: the queue ran dry while devices waited, the cloud idled.)
// Until the rate is known (the first refusals of a storm), the fixed retryAfterSeconds.
import { ApiError } from './errors.ts';

export interface AdmissionLimits {
  /** Operations at work at once. */
  maxActive: number;
  /** Operations waiting for a slot; one more is refused at once. */
  maxQueued: number;
  /** How long an operation may wait for a slot before it is refused. */
  maxWaitMs: number;
  /** The Retry-After of a refusal while the drain rate is not known yet; also the least one given, in seconds. */
  retryAfterSeconds: number;
  /** The longest Retry-After given (default 60 s). */
  retryAfterMaxSeconds?: number;
}

/** Grants counted per bucket of this many ms; the drain rate is taken over RATE_BUCKETS of them. */
const RATE_BUCKET_MS = 500;
const RATE_BUCKETS = 6;
/** Fewer grants than this in the window: the rate is not known (a guess from one or two grants would be noise). */
const RATE_MIN_GRANTS = 16;

export interface AdmissionStats {
  active: number;
  queued: number;
  /** Refusals since start: the queue was full, or the wait too long. */
  refusedFull: number;
  refusedWait: number;
  /** The most ever at work and ever queued. */
  peakActive: number;
  peakQueued: number;
  /** Grants per second over the last few seconds (0: not known yet). */
  drainPerSecond: number;
  /** The longest Retry-After given so far, seconds. */
  maxRetryAfterSeconds: number;
}

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
  expired: boolean;
}

export class Admission {
  private active = 0;
  /** Waiters still in the queue array whose wait ran out. */
  private expired = 0;
  private queue: Waiter[] = [];
  private head = 0;
  private readonly counts = { refusedFull: 0, refusedWait: 0, peakActive: 0, peakQueued: 0, maxRetryAfterSeconds: 0 };
  /** Grants per bucket (a ring), and the bucket the newest count is in. */
  private readonly buckets = new Array<number>(RATE_BUCKETS).fill(0);
  private bucketAt = 0;
  private bucket = 0;
  /** When the newest refused caller was told to come back (ms, `now()` clock). */
  private promisedUntil = 0;

  constructor(
    readonly name: string,
    private readonly limits: AdmissionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  private refusal(reason: 'queue_full' | 'wait_too_long'): ApiError {
    const retryAfter = this.retryAfterSeconds();
    if (retryAfter > this.counts.maxRetryAfterSeconds) this.counts.maxRetryAfterSeconds = retryAfter;
    return new ApiError('store_saturated', { gate: this.name, reason, retry_after_seconds: retryAfter });
  }

  /** Moves the ring to the bucket of `t`, zeroing the buckets passed over. */
  private advance(t: number): void {
    const b = Math.floor(t / RATE_BUCKET_MS);
    if (b === this.bucketAt) return;
    const steps = Math.min(RATE_BUCKETS, Math.max(0, b - this.bucketAt));
    for (let i = 0; i < steps; i++) {
      this.bucket = (this.bucket + 1) % RATE_BUCKETS;
      this.buckets[this.bucket] = 0;
    }
    this.bucketAt = b;
  }

  /**
   * Grants per second over the full buckets of the window (the current, partial one left out), from
   * the oldest one that had any: a gate that started granting a second ago (a storm's first uploads,
   * after its OTA checks) drains at what it granted in that second, not at that spread over the whole
   * window (which made the first refused devices of a storm wait up to 5 times too long, the gate
   * idle meanwhile: docs/fleet-scale.md). 0 while not known.
   */
  drainPerSecond(): number {
    this.advance(this.now());
    let sum = 0;
    let span = 0;
    for (let k = 1; k < RATE_BUCKETS; k++) {
      const n = this.buckets[(this.bucket + k) % RATE_BUCKETS]!; // oldest full bucket first
      if (span > 0 || n > 0) span++;
      sum += n;
    }
    if (sum < RATE_MIN_GRANTS) return 0;
    return sum / ((span * RATE_BUCKET_MS) / 1000);
  }

  /**
   * The Retry-After for a caller refused now: the next return slot on the schedule, at least
   * retryAfterSeconds, at most retryAfterMaxSeconds, whole seconds.
   */
  retryAfterSeconds(): number {
    const min = this.limits.retryAfterSeconds;
    const max = Math.max(min, this.limits.retryAfterMaxSeconds ?? 60);
    const rate = this.drainPerSecond();
    if (rate <= 0) return min;
    const t = this.now();
    this.promisedUntil = Math.min(Math.max(this.promisedUntil, t) + 1000 / rate, t + max * 1000);
    return Math.min(max, Math.max(min, Math.ceil((this.promisedUntil - t) / 1000)));
  }

  private get queued(): number {
    return this.queue.length - this.head - this.expired;
  }

  /** Resolves when a slot is granted (call the returned release once); rejects with 503 otherwise. */
  acquire(): Promise<() => void> {
    if (this.active < this.limits.maxActive && this.queued === 0) {
      this.take();
      return Promise.resolve(this.releaser());
    }
    if (this.queued >= this.limits.maxQueued) {
      this.counts.refusedFull++;
      return Promise.reject(this.refusal('queue_full'));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        expired: false,
        grant: () => {
          clearTimeout(waiter.timer);
          this.take();
          resolve(this.releaser());
        },
        timer: setTimeout(() => {
          // Still queued: it is skipped when its turn comes, and refused now.
          waiter.expired = true;
          this.expired++;
          this.counts.refusedWait++;
          // Expired waiters are dropped from the array in bulk, so it never holds more than twice the queue bound.
          if (this.expired > this.limits.maxQueued) {
            this.queue = this.queue.slice(this.head).filter((w) => !w.expired);
            this.head = 0;
            this.expired = 0;
          }
          reject(this.refusal('wait_too_long'));
        }, this.limits.maxWaitMs).unref(), // a waiter alone does not keep the process up (its socket does)
      };
      this.queue.push(waiter);
      if (this.queued > this.counts.peakQueued) this.counts.peakQueued = this.queued;
    });
  }

  /** Runs `fn` inside a slot. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  stats(): AdmissionStats {
    return { active: this.active, queued: this.queued, ...this.counts, drainPerSecond: this.drainPerSecond() };
  }

  private take(): void {
    this.advance(this.now());
    this.buckets[this.bucket] = this.buckets[this.bucket]! + 1;
    this.active++;
    if (this.active > this.counts.peakActive) this.counts.peakActive = this.active;
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      this.next();
    };
  }

  private next(): void {
    while (this.active < this.limits.maxActive && this.head < this.queue.length) {
      const waiter = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      if (waiter.expired) {
        this.expired--;
        continue;
      }
      waiter.grant();
    }
  }
}
