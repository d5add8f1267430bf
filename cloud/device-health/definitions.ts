// Device health, the cloud's side of docs/device-health.md: the words of the reports boards send, the
// bounds the cloud keeps, and what it counts from them ("unexpected reboot", device-hours, the rate per
// 1,000 device-hours). Plain values and functions only: the error catalog (cloud/errors.ts) reads the
// limits, and the catalog is also compiled for the console in the browser.

/** Why the last run ended (a boot report's `reason`). */
export const BOOT_REASONS = ['power_on', 'software', 'watchdog', 'abort', 'panic', 'brownout', 'deep_sleep', 'unknown'] as const;
export type BootReason = (typeof BOOT_REASONS)[number];

/**
 * Reasons that count as an unexpected reboot (docs/device-health.md, Definitions): the run ended
 * without anyone asking. power_on, software (a reboot that was asked for) and deep_sleep do not count.
 */
export const UNEXPECTED_REASONS = ['watchdog', 'abort', 'panic', 'brownout', 'unknown'] as const satisfies readonly BootReason[];
export type UnexpectedReason = (typeof UNEXPECTED_REASONS)[number];

export function isUnexpected(reason: BootReason): reason is UnexpectedReason {
  return (UNEXPECTED_REASONS as readonly string[]).includes(reason);
}

/** The kinds of a crash summary the chip kept (a boot report's `crash.kind`, for abort and panic). */
export const CRASH_KINDS = ['memory_full', 'stack_overflow', 'unhandled_exception', 'unhandled_rejection', 'abort', 'panic'] as const;
export type CrashKind = (typeof CRASH_KINDS)[number];
/** The reasons a boot report may carry a crash summary with. */
export const CRASH_REASONS = ['abort', 'panic'] as const satisfies readonly BootReason[];

export const APP_SLOTS = ['ota_0', 'ota_1', 'factory'] as const;
export const OTA_STATES = ['valid', 'pending_verify', 'new', 'undefined'] as const;

/** The steps of an update a board reports (`update` reports' `outcome`). */
export const UPDATE_STEPS = ['downloading', 'installing', 'succeeded', 'failed'] as const;
export type UpdateStep = (typeof UPDATE_STEPS)[number];

/**
 * Why an update failed: the catalog of docs/device-health.md, which the firmware keeps in
 * firmware/src/core/health/outcomes.ts. `rolled_back` is shown apart from the other failures.
 */
export const UPDATE_FAILURE_REASONS = [
  'download_failed', 'size_mismatch', 'hash_mismatch', 'image_invalid', 'image_mismatch', 'signature_invalid',
  'secure_version_too_low', 'no_space', 'rolled_back', 'interrupted', 'refused_unconfirmed',
] as const;
export type UpdateFailureReason = (typeof UPDATE_FAILURE_REASONS)[number];

/** The largest report body (413 before the body is read past it), and the largest heartbeat. */
export const HEALTH_REPORT_MAX_BYTES = 2048;
export const HEARTBEAT_MAX_BYTES = 256;
/** A crash summary's message (1 KB) and an update failure's detail (240 characters). */
export const CRASH_MESSAGE_MAX_CHARS = 1024;
export const UPDATE_DETAIL_MAX_CHARS = 240;

/** Retention per device: its newest reports, and its daily aggregates for this many days (docs/device-health.md). */
export const HEALTH_REPORTS_KEPT = 200;
export const HEALTH_DAYS_KEPT = 400;

/** `--low-heap` without a figure, and the fleet summary's default: a largest free block below this. */
export const LOW_HEAP_DEFAULT_BYTES = 16_384;
/** The fleet summary counts devices with an unexpected reboot in the last this many days by default. */
export const CRASHED_DAYS_DEFAULT = 7;

/** The health gate of a rollout when it is switched on without a minimum (docs/staged-rollouts.md). */
export const HEALTH_MIN_DEVICE_HOURS_DEFAULT = 100;

/** Unexpected reboots per 1,000 device-hours; null with no device-hours to divide by. */
export function perThousandHours(unexpected: number, deviceSeconds: number): number | null {
  return deviceSeconds > 0 ? (unexpected * 1000 * 3600) / deviceSeconds : null;
}

/** The UTC day (YYYY-MM-DD) of an ISO time: daily aggregates are kept by the day the cloud received a report. */
export function dayOf(iso: string): string {
  return iso.slice(0, 10);
}
