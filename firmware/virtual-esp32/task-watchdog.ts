// The task watchdog of a virtual board (ESP-IDF's, 5 s by default): the firmware's main loop is
// pinged every second, or every heap-sample interval with a collection first (the heap probe); a
// ping left unanswered for the time-out means the loop is stuck, and the board resets the chip.
import type { FirmwareProcess, HeapFigures } from './firmware-process.ts';

export interface TaskWatchdogOptions {
  /** Between two pings. */
  intervalMs: number;
  /** A ping unanswered this long: the main loop is stuck. */
  timeoutMs: number;
  /** Each ping collects garbage first, and its figures are a heap sample. */
  collect: boolean;
  onSample: (figures: HeapFigures) => void;
  /** The main loop did not answer (called once; the watchdog stops). */
  onStuck: () => void;
}

export class TaskWatchdog {
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private stopped = false;

  constructor(
    private readonly firmware: FirmwareProcess,
    o: TaskWatchdogOptions,
  ) {
    this.timer = setInterval(() => {
      if (this.busy || this.stopped || !firmware.running) return;
      this.busy = true;
      void firmware.ping({ collect: o.collect, timeoutMs: o.timeoutMs }).then((figures) => {
        this.busy = false;
        if (this.stopped) return;
        if (figures) {
          if (o.collect) o.onSample(figures);
          return;
        }
        if (!firmware.running) return; // it ended meanwhile: that end is reported, not a stuck loop
        this.stop();
        o.onStuck();
      });
    }, o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}
