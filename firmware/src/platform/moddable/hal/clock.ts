// Clock and Timers on Moddable's `time`, `timer` and `sntp` modules. The wall clock is the RTC that
// `Time.set` sets (modules/base/time); until SNTP has answered it counts from the epoch at boot, so
// `synchronized()` stays false and nothing that signs a timestamp runs (spec 7: 503). SNTP
// (modules/network/sntp/sntp.js) retries itself every 5 s, five times, then reports -1: a new
// attempt is made a minute later, and the clock is set again once a day.
import SNTP from 'sntp';
import Time from 'time';
import Timer from 'timer';
import type { Clock, Timers } from '../../../hal/clock.ts';

const RETRY_MS = 60_000;
const RESYNC_MS = 24 * 60 * 60 * 1000;

export class SntpClock implements Clock {
  private isSynchronized = false;
  private client: SNTP | undefined;
  private next: Timer | undefined;

  constructor(
    private readonly host: string,
    private readonly log: (message: string) => void,
  ) {}

  now(): number {
    return Date.now();
  }

  /**
   * Where uptime counts from. On an ESP32 `Time.ticks` counts milliseconds from boot (esp/modTime.c);
   * the SDK's Linux host build, which virtual boards run, gives the epoch's milliseconds instead
   * (lin/modTime.c: gettimeofday), which made every health report's `up` the largest it may be. A
   * count of milliseconds since boot never reaches 1e12 (31 years), so a larger one is the host's and
   * uptime counts from this clock's making, early in the boot.
   */
  private readonly ticksAtBoot = Time.ticks > 1e12 ? Time.ticks : 0;

  uptime(): number {
    return Time.ticks - this.ticksAtBoot;
  }

  synchronized(): boolean {
    return this.isSynchronized;
  }

  /** Asks the SNTP server now (called when an interface gets an address); one request at a time. */
  synchronize(): void {
    if (this.client) return;
    if (this.next) Timer.clear(this.next);
    this.next = undefined;
    this.client = new SNTP({ host: this.host }, (message, value) => {
      if (message === SNTP.time && typeof value === 'number') {
        Time.set(value);
        if (!this.isSynchronized) this.log(`clock set by SNTP (${this.host})`);
        this.isSynchronized = true;
        this.finish(RESYNC_MS);
      } else if (message === SNTP.error) {
        this.log(`SNTP ${this.host}: ${String(value)}; again in ${RETRY_MS / 1000} s`);
        this.finish(RETRY_MS);
      }
    });
  }

  private finish(againMs: number): void {
    this.client = undefined; // sntp.js closes itself after reporting time or error
    this.next = Timer.set(() => {
      this.next = undefined;
      this.synchronize();
    }, againMs);
  }
}

/** The HAL's numeric timer ids over Timer objects (modules/base/timer): a map, per instance. */
export class BoardTimers implements Timers {
  private readonly pending = new Map<number, Timer>();
  private nextId = 1;

  setTimeout(callback: () => void, delayMs: number): number {
    const id = this.nextId++;
    this.pending.set(
      id,
      Timer.set(() => {
        this.pending.delete(id);
        callback();
      }, Math.max(0, delayMs)),
    );
    return id;
  }

  clearTimeout(id: number): void {
    const timer = this.pending.get(id);
    if (timer === undefined) return;
    this.pending.delete(id);
    Timer.clear(timer);
  }
}
