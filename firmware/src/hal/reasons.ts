// The words of a boot report (docs/device-health.md, "boot"): why the firmware's last run ended, and
// what a crash the chip kept a summary of was. One list each, imported by the HAL's platforms (the
// real chip's natives answer these names), the virtual chip's RTC memory and the cloud's schema.
// Frozen: a preloaded module's objects live in flash (docs/moddable-build.md).

/** Why the last run ended: esp_reset_reason, and what the chip kept across the reset. */
export const RESET_REASONS = Object.freeze(['power_on', 'software', 'watchdog', 'abort', 'panic', 'brownout', 'deep_sleep', 'unknown'] as const);
export type ResetReason = (typeof RESET_REASONS)[number];

/** What a crash was (a boot report's `crash.kind`). */
export const CRASH_KINDS = Object.freeze(['memory_full', 'stack_overflow', 'unhandled_exception', 'unhandled_rejection', 'abort', 'panic'] as const);
export type CrashKind = (typeof CRASH_KINDS)[number];

/** The reasons the chip keeps a crash summary with (an XS abort, a panic). */
export const CRASH_REASONS = Object.freeze(['abort', 'panic'] as const satisfies readonly ResetReason[]);

/** A reset reason by its name as a native answers it; a name the list does not know is `unknown`. */
export function resetReasonNamed(name: string): ResetReason {
  return (RESET_REASONS as readonly string[]).includes(name) ? (name as ResetReason) : 'unknown';
}

/** A crash kind by its name as a native or the abort hook gives it; a name the list does not know is `abort`. */
export function crashKindNamed(name: string): CrashKind {
  return (CRASH_KINDS as readonly string[]).includes(name) ? (name as CrashKind) : 'abort';
}
