// `time` (modules/base/time, documentation/base/time.md): Time.set(seconds) sets the RTC that
// Date.now() reads. Until then the RTC counts from the epoch at boot (ESP-IDF starts it at 0), so
// the clock says 1970 until SNTP answers. The sim's Date.now (runtime.ts) reads this.
import { hostCall } from '../host.ts';

let offsetMs = 0;
let set = false;

/** Milliseconds since the host's boot of this engine, from the host's monotonic clock. */
function uptimeMs(): number {
  return hostCall('clock.uptime').value as number;
}

export function rtcNow(): number {
  return uptimeMs() + offsetMs;
}

export function rtcWasSet(): boolean {
  return set;
}

const Time = {
  set(seconds: number): void {
    offsetMs = seconds * 1000 - uptimeMs();
    set = true;
  },
  get ticks(): number {
    return uptimeMs();
  },
  timezone: 0,
  dst: 0,
};

export default Time;
