// What the SDK's XS provides globally and xsnap does not (or does differently), set before any
// platform module is evaluated (app.ts imports this first):
// - `native(name)`: the platform's native functions (natives.ts);
// - Date.now: the board's RTC (modules/time.ts), which counts from the epoch at boot until SNTP
//   sets it, instead of the host's wall clock. //@@ `new Date()` without arguments still reads
//   xsnap's own clock; the firmware uses Date.now (hal/clock.ts).
import { native } from './natives.ts';
import { rtcNow } from './modules/time.ts';

(globalThis as unknown as { native: typeof native }).native = native;
Date.now = () => rtcNow();
