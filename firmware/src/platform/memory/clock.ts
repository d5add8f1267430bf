// Virtual time: the wall clock and the timers advance only when a test says so.
import type { Clock, Timers } from '../../hal/clock.ts';

export class ManualClock implements Clock, Timers {
  private nowMs: number;
  /** Advanced with the wall clock; untouched by setWall. */
  private uptimeMs = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();
  isSynchronized = true;

  constructor(startMs: number) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  uptime(): number {
    return this.uptimeMs;
  }

  /** Sets the wall clock as SNTP does (a jump); timers and uptime are not moved. */
  setWall(ms: number): void {
    const shift = ms - this.nowMs;
    this.nowMs = ms;
    for (const t of this.pending.values()) t.at += shift;
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
      const at = Math.max(this.nowMs, next.at);
      this.uptimeMs += at - this.nowMs;
      this.nowMs = at;
      next.callback();
      for (let i = 0; i < 50; i++) await Promise.resolve();
    }
    this.uptimeMs += until - this.nowMs;
    this.nowMs = until;
  }
}
