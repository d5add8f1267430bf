// A reboot the firmware decides on (a console command, an installed update, a factory reset, a
// client's configuration received) comes a little after it is asked for, never in the same turn.
//
// Why not at once, or on a timer of 0: on the chip the main loop runs due timers before the messages
// that carry promise jobs (xs/platforms/esp/xsHost.c: modTimersExecute, then modMessageService; each
// `await` resumes in a later message). A timer of 0 set deep in an async handler fires before the
// awaits above it resume, so the console's `OK` answer, or an HTTP response still in lwIP's send
// buffer, was lost to the reset (seen on the virtual board running the SDK: `ota check` never
// answered). The grace is a few main-loop turns and a TCP round trip on a LAN, far below what a person
// or the bench notices.
import type { Hal } from '../hal/index.ts';

export const REBOOT_GRACE_MS = 250;

/** Reboots after REBOOT_GRACE_MS, once what the current request writes is out. */
export function rebootSoon(hal: Pick<Hal, 'timers' | 'system'>, reason: string): void {
  hal.timers.setTimeout(() => hal.system.reboot(reason), REBOOT_GRACE_MS);
}
