// Virtual time: the wall clock and the timers advance only when a test says so.
import type { Clock, Timers } from '../../hal/clock.ts';

export class ManualClock implements Clock, Timers {
  private nowMs: number;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();
  isSynchronized = true;

  constructor(startMs: number) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  synchronized(): boolean {
    return this.isSynchronized;
  }

  setTimeout(callback: () => void, delayMs: number): number {
    const id = this.nextId++;
    this.pending.set(id, { at: this.nowMs + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimeout(id: number): void {
    this.pending.delete(id);
  }

  /** Moves time forward, running each due timer in order and letting its promises settle. */
  async advance(ms: number): Promise<void> {
    const until = this.nowMs + ms;
    for (;;) {
      let nextId: number | undefined;
      let next: { at: number; callback: () => void } | undefined;
      for (const [id, t] of this.pending) if (t.at <= until && (next === undefined || t.at < next.at)) [nextId, next] = [id, t];
      if (next === undefined || nextId === undefined) break;
      this.pending.delete(nextId);
      this.nowMs = Math.max(this.nowMs, next.at);
      next.callback();
      for (let i = 0; i < 50; i++) await Promise.resolve();
    }
    this.nowMs = until;
  }
}
