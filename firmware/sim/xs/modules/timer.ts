// `timer` (modules/base/timer, documentation/base/timer.md): Timer.set(callback, delay, repeat)
// returns a timer that Timer.clear cancels; the callback receives the timer. Timer.repeat(callback,
// interval) is set(callback, interval, interval); Timer.schedule re-arms one. The host keeps the
// clock; each expiry comes back as an event. //@@ Timer.delay (a busy wait) is not emulated: the
// host never blocks inside a call.
import { hostCall, newId, onEvent } from '../host.ts';

interface SimTimer {
  id: number;
  callback: (timer: SimTimer) => void;
  repeat: number;
}

const timers = new Map<number, SimTimer>();

onEvent('timer', (event) => {
  const timer = timers.get(event.id!);
  if (!timer) return; // cleared while its expiry was on the way
  if (!timer.repeat) timers.delete(timer.id);
  timer.callback(timer);
});

function arm(timer: SimTimer, delay: number, repeat: number): void {
  timer.repeat = repeat > 0 ? repeat : 0;
  timers.set(timer.id, timer);
  hostCall('timer.set', { id: timer.id, ms: Math.max(0, Number(delay) || 0), repeat: timer.repeat });
}

const Timer = {
  set(callback: (timer: SimTimer) => void, delay = 0, repeat = 0): SimTimer {
    const timer: SimTimer = { id: newId(), callback, repeat: 0 };
    arm(timer, delay, repeat);
    return timer;
  },
  repeat(callback: (timer: SimTimer) => void, interval: number): SimTimer {
    return Timer.set(callback, interval, interval);
  },
  schedule(timer: SimTimer, delay: number, repeat = 0): void {
    hostCall('timer.clear', { id: timer.id });
    arm(timer, delay, repeat);
  },
  clear(timer: SimTimer | undefined): void {
    if (!timer || !timers.delete(timer.id)) return;
    hostCall('timer.clear', { id: timer.id });
  },
  delay(): never {
    throw new Error('Timer.delay is not emulated (the host never blocks)');
  },
};

export default Timer;
