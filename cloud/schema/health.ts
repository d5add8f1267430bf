// The shapes of device health (docs/device-health.md), declared once: the three reports a board sends
// (POST /devices/{uuid}/health checks them: a bad value is 400 invalid_health_report naming the field),
// and what the admin API answers about them: a device's timeline, a release's health, the fleet's.
import { Type, type TSchema } from '@sinclair/typebox';
import {
  APP_SLOTS,
  BOOT_REASONS,
  CRASH_KINDS,
  CRASH_MESSAGE_MAX_CHARS,
  CRASH_REASONS,
  CRASH_WHERE_MAX_CHARS,
  OTA_STATES,
  UNEXPECTED_REASONS,
  UPDATE_DETAIL_MAX_CHARS,
  UPDATE_FAILURE_REASONS,
  UPDATE_STEPS,
} from '../health-definitions.ts';
import { DateTime, DeviceHealth, Digits, IsoUtcTimestamp, Nullable, TrackFields, Version } from './api.ts';
import { ERROR_CODE, EXPECTED } from './validator.ts';

const invalid = { [ERROR_CODE]: 'invalid_health_report' } as const;
const oneOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description, [EXPECTED]: values.join(', '), ...invalid });
const count = (description: string, max = 4_294_967_295) => Type.Integer({ minimum: 0, maximum: max, description, [EXPECTED]: `a whole number from 0 to ${max}`, ...invalid });
const text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[^\\u0000]*$', description, [EXPECTED]: `1 to ${maxLength} characters`, ...invalid });
const version = (description: string) => ({ ...Version, description, ...invalid });
const report = (title: string, kind: string, fields: Record<string, TSchema>, options: Record<string, unknown> = {}) =>
  Type.Object(
    {
      kind: Type.Literal(kind, { ...invalid }),
      seq: count("The board's report counter: stored once per (uuid, seq)", Number.MAX_SAFE_INTEGER),
      at: Type.Union([{ ...IsoUtcTimestamp, ...invalid }, Type.Null()], { description: 'When the board made it (UTC, Z), or null before its clock was set', [EXPECTED]: 'an ISO 8601 UTC timestamp ending in Z, or null', ...invalid }),
      up: count("The board's uptime in seconds when it made it"),
      fw: version("The running firmware's version (its app descriptor)"),
      ...fields,
    },
    { title, additionalProperties: false, ...invalid, ...options },
  );

/** After every boot: why the last run ended, and which image runs. */
export const BootReport = report(
  'BootReport',
  'boot',
  {
    reason: oneOf(BOOT_REASONS, 'Why the last run ended'),
    by: Type.Optional(text(64, 'For software: who asked (console, api, ota <version>, provisioned, factory_reset, …)')),
    crash: Type.Optional(
      Type.Object(
        {
          kind: oneOf(CRASH_KINDS, 'What the crash was'),
          message: Type.String({ maxLength: CRASH_MESSAGE_MAX_CHARS, pattern: '^[^\\u0000]*$', [EXPECTED]: `at most ${CRASH_MESSAGE_MAX_CHARS} characters`, ...invalid }),
          where: Type.Optional(text(CRASH_WHERE_MAX_CHARS, 'The module and line XS knew')),
        },
        { additionalProperties: false, description: 'For abort and panic, when the chip kept a summary', ...invalid },
      ),
    ),
    slot: oneOf(APP_SLOTS, 'The running app slot'),
    ota: oneOf(OTA_STATES, "The running slot's state"),
    rolled_back: Type.Optional(
      Type.Object({ slot: oneOf(APP_SLOTS, 'The slot of the image that did not come up'), version: version('Its version') }, { additionalProperties: false, description: 'When the bootloader went back', ...invalid }),
    ),
    sv: count("The running image's secure_version"),
    boots: count('Boots since the flash was last erased'),
    dropped: Type.Optional(count('Reports the board dropped (refused with 400 or 413) since its flash was erased')),
  },
  {
    // A crash summary only with the reasons that keep one.
    if: { properties: { reason: { not: { enum: [...CRASH_REASONS] } } } },
    then: { properties: { crash: Type.Never({ [EXPECTED]: `no crash summary unless reason is ${CRASH_REASONS.join(' or ')}`, ...invalid }) } },
  },
);

/** Every heartbeatSeconds (300 to 86,400; default 3,600): heap, radio, reboots. */
export const HeartbeatReport = report('HeartbeatReport', 'heartbeat', {
  chunk: count('The XS chunk heap in use now, bytes'),
  chunk_peak: count('Its peak since the last heartbeat'),
  slots: count('The XS slot heap in use now'),
  slots_peak: count('Its peak since the last heartbeat'),
  block: count("The largest free block of the chip's own heap, bytes"),
  heap_min: count("The lowest free heap of the chip's own heap since boot, bytes"),
  rssi: Type.Union([Type.Integer({ minimum: -128, maximum: 0, ...invalid }), Type.Null()], { description: "The Wi-Fi station's RSSI in dBm, or null (Ethernet)", [EXPECTED]: 'a whole number of dBm from -128 to 0, or null', ...invalid }),
  reboots: count('Boots since the last heartbeat'),
  ota: oneOf(OTA_STATES, "The running slot's state"),
  dropped: Type.Optional(count('Reports the board dropped (refused with 400 or 413) since its flash was erased')),
});

const FailureReason = oneOf(UPDATE_FAILURE_REASONS, 'For failed: why');

/** At each step of an update, and once when it ends. */
export const UpdateReport = report(
  'UpdateReport',
  'update',
  {
    version: version('The version being installed'),
    outcome: oneOf(UPDATE_STEPS, 'The step reached'),
    reason: Type.Optional(FailureReason),
    detail: Type.Optional(Type.String({ maxLength: UPDATE_DETAIL_MAX_CHARS, pattern: '^[^\\u0000]*$', description: 'For failed: the sentence the board logged', [EXPECTED]: `at most ${UPDATE_DETAIL_MAX_CHARS} characters`, ...invalid })),
  },
  {
    // A failure names its reason; the other steps carry neither reason nor detail.
    if: { properties: { outcome: { const: 'failed' } } },
    then: { properties: { reason: FailureReason }, required: ['reason'] },
    else: { properties: { reason: Type.Never({ [EXPECTED]: 'no reason unless outcome is failed', ...invalid }), detail: Type.Never({ [EXPECTED]: 'no detail unless outcome is failed', ...invalid }) } },
  },
);

export const REPORT_SHAPES = { boot: BootReport, heartbeat: HeartbeatReport, update: UpdateReport } as const;
export const HealthReport = Type.Union([BootReport, HeartbeatReport, UpdateReport], { title: 'HealthReport', description: 'One report, at most 2,048 bytes (a heartbeat at most 256)' });
/** The first check of a report: an object that says which report it is. */
export const HealthReportKind = Type.Object(
  { kind: oneOf(Object.keys(REPORT_SHAPES) as (keyof typeof REPORT_SHAPES)[], 'Which report') },
  { [EXPECTED]: 'one JSON object, a report', ...invalid },
);
export const HealthStored = Type.Object({ seq: Type.Integer() }, { title: 'HealthStored', additionalProperties: false });

// ---- the admin API's views --------------------------------------------------------------------------
const integers = (keys: readonly string[], description: string) => Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer()])), { additionalProperties: false, description });
const Reboots = integers(UNEXPECTED_REASONS, 'Unexpected reboots counted against the version, by reason');
const Crashes = integers(CRASH_KINDS, 'Crash summaries, by kind');

export const DeviceHealthQuery = Type.Object(
  {
    limit: Type.Optional(Digits(4, 'At most this many reports (1 to 1000, default 100)')),
    before: Type.Optional(Digits(16, 'The next page: reports older than this seq (next_before of the previous page)')),
    days: Type.Optional(Digits(3, 'Daily aggregates of the last this many days (1 to 400, default 30)')),
  },
  { additionalProperties: false, [ERROR_CODE]: 'invalid_query' },
);
export const FleetHealthQuery = Type.Object(
  {
    crashed_days: Type.Optional(Digits(5, 'Count devices with an unexpected reboot in the last this many days (default 7)')),
    low_heap: Type.Optional(Digits(9, "Count devices whose last heartbeat's largest free block is below this many bytes (default 16384)")),
  },
  { additionalProperties: false, [ERROR_CODE]: 'invalid_query' },
);

export const HealthDayView = Type.Object(
  {
    day: Type.String({ description: 'The UTC day the cloud received the reports (YYYY-MM-DD)' }),
    version: Type.String(),
    reports: Type.Integer(),
    boots: Type.Integer(),
    heartbeats: Type.Integer(),
    device_hours: Type.Number(),
    unexpected_reboots: Type.Integer(),
    reboots: Reboots,
    crashes: Crashes,
    heap_min: Nullable(Type.Integer()),
    block_min: Nullable(Type.Integer()),
    rssi_min: Nullable(Type.Integer()),
  },
  { title: 'HealthDay', additionalProperties: false },
);

export const DeviceHealthTimeline = Type.Object(
  {
    uuid: Type.String(),
    health: Nullable(DeviceHealth),
    reports: Type.Array(Type.Object({ received_at: DateTime, report: HealthReport }, { additionalProperties: false }), { description: 'Newest first' }),
    next_before: Nullable(Type.Integer({ description: 'Pass as before= for the next page; null on the last one' })),
    days: Type.Array(HealthDayView, { description: 'Newest first' }),
  },
  { title: 'DeviceHealthTimeline', additionalProperties: false },
);

export const ReleaseHealthFigures = Type.Object(
  {
    ...TrackFields,
    version: Type.String(),
    devices: Type.Integer({ description: 'Devices that ran it (a report from it, or an unexpected reboot counted against it)' }),
    device_hours: Type.Number(),
    boots: Type.Integer(),
    heartbeats: Type.Integer(),
    unexpected_reboots: Type.Integer(),
    unexpected_per_1000h: Nullable(Type.Number({ description: 'Unexpected reboots per 1,000 device-hours (null: no device-hours yet)' })),
    crash_free_share: Nullable(Type.Number({ description: 'Devices with no unexpected reboot on it / devices on it, 0 to 1 (null: no devices)' })),
    reboots: Reboots,
    crashes: Crashes,
    outcomes: Type.Object(
      {
        in_progress: Type.Integer(),
        succeeded: Type.Integer(),
        failed: Type.Object({}, { additionalProperties: Type.Integer(), description: 'By reason (rolled_back apart)' }),
        rolled_back: Type.Integer(),
      },
      { additionalProperties: false, description: "Devices by the last step they reported updating to this version" },
    ),
  },
  { title: 'ReleaseHealthFigures', additionalProperties: false },
);

export const ReleaseHealth = Type.Object(
  {
    ...ReleaseHealthFigures.properties,
    previous: Nullable(ReleaseHealthFigures),
    gate: Nullable(
      Type.Object(
        {
          state: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
          health_margin: Nullable(Type.Number()),
          health_min_device_hours: Type.Integer(),
          judging: Type.Boolean({ description: 'The release has run the minimum device-hours' }),
          over: Type.Boolean({ description: "Its rate exceeds the previous release's by more than the margin" }),
          paused_reason: Nullable(Type.String()),
        },
        { additionalProperties: false, description: "The rollout's health gate (null: no rollout)" },
      ),
    ),
  },
  { title: 'ReleaseHealth', additionalProperties: false },
);

export const FleetHealth = Type.Object(
  {
    devices: Type.Integer({ description: 'Enrolled devices' }),
    reporting: Type.Integer({ description: 'Devices that sent a report' }),
    crashed: Type.Integer({ description: 'Devices with an unexpected reboot in the last crashed_days days' }),
    low_heap: Type.Integer({ description: "Devices whose last heartbeat's largest free block is below low_heap_bytes" }),
    dropped: Type.Integer({ description: 'Reports the devices say they dropped, summed' }),
    crashed_days: Type.Integer(),
    low_heap_bytes: Type.Integer(),
    releases: Type.Array(ReleaseHealthFigures, { description: 'Every release devices reported from, by track and version' }),
  },
  { title: 'FleetHealth', additionalProperties: false },
);

/** The named shapes of this file, for components.schemas of /openapi.json. */
export const HEALTH_COMPONENTS = {
  BootReport,
  HeartbeatReport,
  UpdateReport,
  HealthReport,
  HealthStored,
  HealthDay: HealthDayView,
  DeviceHealthTimeline,
  ReleaseHealthFigures,
  ReleaseHealth,
  FleetHealth,
} as const;
