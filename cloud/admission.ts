// Admission gates: a bounded number of operations at work, a bounded queue behind them, a bounded wait
// in that queue. Past any bound the caller gets 503 `store_saturated` with Retry-After instead of
// joining an unbounded queue (docs/fleet-scale.md). Used in front of the store (every route's store
// calls) and in front of backup bodies (what an upload holds in memory).
import { ApiError } from './errors.ts';

export interface AdmissionLimits {
  /** Operations at work at once. */
  maxActive: number;
  /** Operations waiting for a slot; one more is refused at once. */
  maxQueued: number;
  /** How long an operation may wait for a slot before it is refused. */
  maxWaitMs: number;
  /** The Retry-After of the refusal, in seconds. */
  retryAfterSeconds: number;
}

export interface AdmissionStats {
  active: number;
  queued: number;
  /** Refusals since start: the queue was full, or the wait too long. */
  refusedFull: number;
  refusedWait: number;
  /** The most ever at work and ever queued. */
  peakActive: number;
  peakQueued: number;
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
  private readonly counts = { refusedFull: 0, refusedWait: 0, peakActive: 0, peakQueued: 0 };

  constructor(
    readonly name: string,
    private readonly limits: AdmissionLimits,
  ) {}

  private refusal(reason: 'queue_full' | 'wait_too_long'): ApiError {
    return new ApiError('store_saturated', { gate: this.name, reason, retry_after_seconds: this.limits.retryAfterSeconds });
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
        }, this.limits.maxWaitMs),
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
    return { active: this.active, queued: this.queued, ...this.counts };
  }

  private take(): void {
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
