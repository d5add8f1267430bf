// Device health, the cloud's side of docs/device-health.md: the words of the reports boards send, the
// bounds the cloud keeps, and what it counts from them ("unexpected reboot", device-hours, the rate per
// 1,000 device-hours). Plain values and functions only: the error catalog (cloud/errors.ts) reads the
// limits, and the catalog is also compiled for the console in the browser.

import { MAX_CRASH_MESSAGE_BYTES, MAX_DETAIL_BYTES, MAX_HEARTBEAT_BYTES, MAX_REPORT_BYTES, MAX_WHERE_BYTES } from '../firmware/src/core/health/limits.ts';
import { UPDATE_FAILURES, UPDATE_OUTCOMES, type UpdateFailure, type UpdateOutcome } from '../firmware/src/core/health/outcomes.ts';
import { CRASH_KINDS as FIRMWARE_CRASH_KINDS, CRASH_REASONS as FIRMWARE_CRASH_REASONS, RESET_REASONS, type CrashKind as FirmwareCrashKind, type ResetReason } from '../firmware/src/hal/reasons.ts';

// The words and bounds of the reports are the firmware's (firmware/src/core/health/): one source for
// what a board sends and what the cloud takes.

/** Why the last run ended (a boot report's `reason`). */
export const BOOT_REASONS = RESET_REASONS;
export type BootReason = ResetReason;

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
export const CRASH_KINDS = FIRMWARE_CRASH_KINDS;
export type CrashKind = FirmwareCrashKind;
/** The reasons a boot report may carry a crash summary with. */
export const CRASH_REASONS = FIRMWARE_CRASH_REASONS;

export const APP_SLOTS = ['ota_0', 'ota_1', 'factory'] as const;
export const OTA_STATES = ['valid', 'pending_verify', 'new', 'undefined'] as const;

/** The steps of an update a board reports (`update` reports' `outcome`). */
export const UPDATE_STEPS = UPDATE_OUTCOMES;
export type UpdateStep = UpdateOutcome;

/** Why an update failed: the catalog of docs/device-health.md. `rolled_back` is shown apart from the other failures. */
export const UPDATE_FAILURE_REASONS = UPDATE_FAILURES;
export type UpdateFailureReason = UpdateFailure;

/** The largest report body (413 before the body is read past it), and the largest heartbeat. */
export const HEALTH_REPORT_MAX_BYTES = MAX_REPORT_BYTES;
export const HEARTBEAT_MAX_BYTES = MAX_HEARTBEAT_BYTES;
/**
 * A crash summary's message, its `where`, and an update failure's detail: the board cuts them to
 * this many UTF-8 bytes as sent, so they are at most as many characters.
 */
export const CRASH_MESSAGE_MAX_CHARS = MAX_CRASH_MESSAGE_BYTES;
export const CRASH_WHERE_MAX_CHARS = MAX_WHERE_BYTES;
export const UPDATE_DETAIL_MAX_CHARS = MAX_DETAIL_BYTES;

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

/** Unexpected reboots in all, from their counts by reason. */
export const unexpectedOf = (reboots: Readonly<Record<UnexpectedReason, number>>): number => Object.values(reboots).reduce((a, n) => a + n, 0);
