// Every shape of the cloud API, declared once (docs/schema-library.md): the request checks, the
// TypeScript types (Static<…>) and GET /openapi.json all come from these. Catalog codes stay in
// cloud/errors.ts; a parameter only names which one a bad value gets (x-error-code).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CHIPS } from '../../firmware/image/chips.ts';
import { ERROR_CATALOG, type ErrorCode } from '../errors.ts';
import { LOG_LEVELS } from '../functions.ts';
import { anyCase, ERROR_CODE, EXPECTED } from './validator.ts';

const code = (c: ErrorCode) => ({ [ERROR_CODE]: c });

// ---- path and query parameters ----------------------------------------------------------------
export const Name = Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', [EXPECTED]: '1 to 64 of A-Z a-z 0-9 . _ -', ...code('invalid_name') });
export const ProductHex = Type.String({
  pattern: '^0x[0-9a-fA-F]{8}$',
  description: 'Product identifier, 0x and 8 hex digits (case-insensitive)',
  [EXPECTED]: '0x followed by 8 hexadecimal digits',
  ...code('invalid_product_hex'),
});
export const Version = Type.String({ pattern: '^\\d{4}\\.\\d{2}\\.\\d{2}$', description: 'Firmware version YYYY.MM.bb', [EXPECTED]: 'YYYY.MM.bb', ...code('invalid_version') });
/**
 * A device UUID is the storage key of its backup (spec 2.2) and names the device's own records on
 * flash, so the cloud takes the firmware's grammar (firmware/src/core/ids.ts, UUID_PATTERN and
 * UUID_RULE): no "." (never "." or ".."), no ":", no "/" or "%". RFC 4122 UUIDs and names such as
 * `ctl-xs-0001` fit.
 */
export const DEVICE_UUID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
export const DEVICE_UUID_RULE = '1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit';
export const DeviceUuid = Type.String({ pattern: DEVICE_UUID_PATTERN, description: `Device UUID: ${DEVICE_UUID_RULE}`, [EXPECTED]: DEVICE_UUID_RULE, ...code('invalid_uuid') });
export const FunctionName = Type.String({ pattern: '^svc-func-', description: 'Cloud function, starts with svc-func-', [EXPECTED]: 'a name starting with svc-func-', ...code('invalid_function_name') });

export const TrackParams = Type.Object({
  class: { ...Name, description: 'Hardware class' },
  product_hex: ProductHex,
  application: { ...Name, description: 'Application; equals class for the main application' },
});
export const ReleaseParams = Type.Object({ ...TrackParams.properties, version: Version });
/** A release being created must name a real month (MM 01 to 12). */
export const NewReleaseParams = Type.Object({
  ...TrackParams.properties,
  version: { ...Version, pattern: '^\\d{4}\\.(?:0[1-9]|1[0-2])\\.\\d{2}$', [EXPECTED]: 'YYYY.MM.bb with MM from 01 to 12' },
});
export const UuidParams = Type.Object({ uuid: DeviceUuid });
export const FunctionParams = Type.Object({ function_name: FunctionName });
export const OtaQuery = Type.Object({
  current_version: Type.Optional({ ...Version, description: 'Without it, the list of all RELEASED versions is returned' }),
});

// ---- the signed-request headers (spec 5.1) ----------------------------------------------------------
// The one declaration of their checks: cloud/auth/device-signature.ts validates them with this schema
// and only decodes what passed. Each header is one value (a repeated header is refused), then its checks
// in order (allOf), each naming its catalog code. A missing or blank header is missing_header.
/** Strict Base64: the standard alphabet with its padding. */
export const BASE64_PATTERN = '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$';
export const Base64 = Type.String({ pattern: BASE64_PATTERN, [EXPECTED]: 'strict Base64 (standard alphabet, padded)', ...code('invalid_base64') });
export const NONCE_BYTES = 32;
// A day of the Gregorian calendar: 31, 30 or 28 days a month, 29 February in a leap year only. As a
// pattern, not `format: date-time`: ajv-formats' date-time check costs ~800 ns, this ~60 ns, and it is
// on every signed request.
const DAY = '\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))';
const LEAP_DAY = '(?:\\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29';
/** ISO 8601 UTC ending in Z, fractions of a second allowed (1 to 9 digits), on a real calendar day. */
export const IsoUtcTimestamp = Type.String({
  pattern: `^(?:${DAY}|${LEAP_DAY})T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?Z$`,
  [EXPECTED]: 'an ISO 8601 UTC timestamp such as 2026-11-21T12:00:00Z',
  ...code('invalid_header'),
});
const signedHeader = (description: string, checks: TSchema[]) =>
  Type.String({ description, [EXPECTED]: 'one value', ...code('invalid_header'), allOf: checks });
export const DeviceSignatureHeaders = Type.Object(
  {
    'x-device-uuid': signedHeader('Must equal {uuid}', [Type.String({ pattern: DEVICE_UUID_PATTERN, [EXPECTED]: DEVICE_UUID_RULE, ...code('invalid_header') })]),
    'x-device-nonce': signedHeader(`Base64 of ${NONCE_BYTES} random bytes, never reused`, [
      Base64,
      // Strict Base64 of 44 characters with one "=" is exactly 32 bytes.
      Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', [EXPECTED]: `Base64 of ${NONCE_BYTES} bytes`, ...code('invalid_header') }),
    ]),
    'x-device-timestamp': signedHeader('ISO 8601 UTC ending in Z; accepted within ±300 s', [IsoUtcTimestamp]),
    'x-device-signature': signedHeader('Base64 DER ECDSA P-256 signature, SHA-256 over nonce bytes || UTF-8 timestamp', [
      Base64,
      // 8 to 72 bytes: 12 to 96 characters of strict Base64, but not 12 ending in "==" (7 bytes).
      Type.String({ pattern: '^(?![A-Za-z0-9+/]{10}==$)[A-Za-z0-9+/=]{12,96}$', [EXPECTED]: 'a DER ECDSA P-256 signature (8 to 72 bytes)', ...code('invalid_header') }),
    ]),
  },
  { ...code('missing_header') },
);
export const EtagHeader = Type.String({ description: 'Plaintext SHA-256 hex, quoted or bare; stored as metadata' });
export const IfNoneMatchHeader = Type.String({ description: 'ETags, quoted or bare, or *; with ETag on POST: equal to the stored ETag gives 304' });

// ---- fleet operations: images, rollouts, groups, inventory, audit (issue 21) -------------------------
export const Sha256Hex = Type.String({ pattern: '^[0-9a-fA-F]{64}$', [EXPECTED]: '64 hexadecimal digits' });
/** Free text an operator gives a device; shown as text, never as markup (docs/operator-console.md). */
export const Label = Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'Free text, at most 200 characters, no control characters', [EXPECTED]: 'at most 200 characters without control characters', ...code('invalid_body') });
export const GroupName = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', [EXPECTED]: '1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or a digit', ...code('invalid_device_groups') });
export const ChipName = Type.Unsafe<keyof typeof CHIPS>({ type: 'string', enum: Object.keys(CHIPS), description: 'The chip the image is for (default esp32s3)', [EXPECTED]: Object.keys(CHIPS).join(', ') });
/** esp_app_desc_t.project_name holds 31 characters. */
export const ProjectName = Type.String({ pattern: '^[A-Za-z0-9._-]{1,31}$', description: "The project the image's app descriptor must name", [EXPECTED]: '1 to 31 of A-Z a-z 0-9 . _ -' });
export const Digits = (max: number, description: string) => Type.String({ pattern: `^\\d{1,${max}}$`, description, [EXPECTED]: 'a whole number' });
/** Query parameters of an image upload: what to check the image against, and its rollout. */
export const ImageReleaseQuery = Type.Object(
  {
    chip: Type.Optional(ChipName),
    project: Type.Optional(ProjectName),
    sha256: Type.Optional({ ...Sha256Hex, description: 'The SHA-256 the uploader computed: the upload must hash to it' }),
    rollout_percent: Type.Optional(Digits(3, 'Start a staged rollout at this percentage (0 to 100)')),
    rollout_groups: Type.Optional(Type.String({ maxLength: 2200, description: 'Device groups the rollout reaches, comma-separated' })),
    rollout_step_percent: Type.Optional(Digits(3, 'Raise the rollout by this much…')),
    rollout_step_every_seconds: Type.Optional(Digits(9, '…every so many seconds')),
    rollout_error_threshold_percent: Type.Optional(Digits(3, 'Pause when failed installs reach this share of the outcomes (default 20)')),
    rollout_min_reports: Type.Optional(Digits(7, '…once at least this many outcomes are in (default 5)')),
  },
  { additionalProperties: false, ...code('invalid_query') },
);
const Percent = Type.Integer({ minimum: 0, maximum: 100, [EXPECTED]: 'a whole number from 0 to 100' });
export const RolloutBody = Type.Object(
  {
    percent: Type.Optional({ ...Percent, description: 'Devices whose stable bucket (from the UUID) is below this percentage are reached' }),
    groups: Type.Optional(Type.Array({ ...GroupName, ...code('invalid_rollout') }, { maxItems: 32, uniqueItems: true, description: 'Devices in any of these groups are reached' })),
    step_percent: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), Type.Null()], { description: 'The schedule: this much more…', [EXPECTED]: 'a whole number from 1 to 100, or null' })),
    step_every_seconds: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 31_536_000 }), Type.Null()], { description: '…every so many seconds (null: raised by hand only)', [EXPECTED]: 'a whole number of seconds from 1 to 31536000, or null' })),
    error_threshold_percent: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Pause when failed installs reach this share of the reported outcomes', [EXPECTED]: 'a whole number from 1 to 100' })),
    min_reports: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: '…once at least this many outcomes are in', [EXPECTED]: 'a whole number from 1 to 1000000' })),
    health_margin: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 1_000_000 }), Type.Null()], {
        description: "The health gate: pause when the release's unexpected reboots per 1,000 device-hours exceed the previous RELEASED version's by more than this (null: off)",
        [EXPECTED]: 'a number from 0 to 1000000 (unexpected reboots per 1,000 device-hours), or null',
      }),
    ),
    health_min_device_hours: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 100_000_000, description: '…once its devices have run it this many hours (default 100)', [EXPECTED]: 'a whole number of device-hours from 0 to 100000000' }),
    ),
  },
  { title: 'RolloutSettings', additionalProperties: false, ...code('invalid_rollout') },
);
/** Trusted keys a track's signing setting may list (the chip has three eFuse slots; rotations overlap). */
export const MAX_TRUSTED_KEYS = 16;
/** A Secure Boot v2 key digest: SHA-256 of the key material a signature block carries, as SECURE_BOOT_DIGESTn holds it. */
export const KeyDigest = Type.String({
  pattern: '^[0-9a-fA-F]{64}$',
  description: 'SHA-256 of the Secure Boot v2 key material (espsecure digest-sbv2-public-key), 64 hex digits',
  [EXPECTED]: '64 hexadecimal digits (a key digest)',
  ...code('invalid_track_signing'),
});
export const TrackSigningBody = Type.Object(
  {
    required: Type.Boolean({ description: 'Refuse an image unless one of its signature blocks is signed by a key of `keys` (docs/secure-boot.md)', [EXPECTED]: 'true or false', ...code('invalid_track_signing') }),
    keys: Type.Array(
      Type.Object({ digest: KeyDigest, label: Type.Optional({ ...Label, ...code('invalid_track_signing') }) }, { additionalProperties: false, ...code('invalid_track_signing') }),
      { maxItems: MAX_TRUSTED_KEYS, description: 'The keys the track trusts', ...code('invalid_track_signing') },
    ),
  },
  { title: 'TrackSigningSettings', additionalProperties: false, ...code('invalid_track_signing'), [EXPECTED]: '{"required": true or false, "keys": [{"digest", "label"?}]}' },
);
export const DeviceGroupsBody = Type.Object(
  { groups: Type.Array(GroupName, { maxItems: 32, uniqueItems: true }) },
  { title: 'DeviceGroups', additionalProperties: false, ...code('invalid_device_groups') },
);
export const DeviceLabelBody = Type.Object(
  { label: Type.Union([Label, Type.Null()], { description: 'The new label; null or "" clears it', [EXPECTED]: 'at most 200 characters without control characters, or null' }) },
  { title: 'DeviceLabel', additionalProperties: false, ...code('invalid_body') },
);
/** Which tracks GET /admin/device-versions counts: every one, or those matching what is given. */
export const DeviceVersionsQuery = Type.Object(
  {
    class: Type.Optional({ ...Name, description: 'Only this hardware class', ...code('invalid_query') }),
    product_hex: Type.Optional({ ...ProductHex, ...code('invalid_query') }),
    application: Type.Optional({ ...Name, description: 'Only this application', ...code('invalid_query') }),
  },
  { additionalProperties: false, ...code('invalid_query') },
);
const IsoSince = Type.String({ format: 'date-time', [EXPECTED]: 'an ISO 8601 timestamp such as 2026-11-21T12:00:00Z' });
export const InventoryQuery = Type.Object(
  {
    class: Type.Optional({ ...Name, description: 'Last checked on this class', ...code('invalid_query') }),
    product_hex: Type.Optional({ ...ProductHex, ...code('invalid_query') }),
    application: Type.Optional({ ...Name, ...code('invalid_query') }),
    version: Type.Optional({ ...Version, description: 'Reported this version at its last check', ...code('invalid_query') }),
    not_seen_since: Type.Optional({ ...IsoSince, description: 'No OTA check since then (or never)' }),
    not_seen_days: Type.Optional(Digits(5, 'No OTA check for this many days (or never)')),
    no_backup_since: Type.Optional({ ...IsoSince, description: 'No backup since then (or none)' }),
    no_backup_days: Type.Optional(Digits(5, 'No backup for this many days (or none)')),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A part of the UUID or label, any case' })),
    group: Type.Optional(GroupName),
    crashed_days: Type.Optional(Digits(5, 'An unexpected reboot in the last this many days (docs/device-health.md)')),
    low_heap: Type.Optional(Digits(9, "The last heartbeat's largest free block below this many bytes")),
    behind: Type.Optional(Type.Literal('true', { description: 'Reported a version older than the newest RELEASED one of its track at its last check', [EXPECTED]: 'true' })),
    failed_update: Type.Optional(Type.Literal('true', { description: 'Its latest update (the release it was offered last) failed', [EXPECTED]: 'true' })),
    match: Type.Optional(
      Type.String({
        pattern: '^(all|any)$',
        description: 'How the conditions (not seen, no backup, crashed, low heap) combine: all (the default: every one given) or any (at least one); the other filters always apply',
        [EXPECTED]: 'all or any',
      }),
    ),
    after: Type.Optional({ ...DeviceUuid, description: 'The next page: UUIDs after this one (next_after of the previous page)', ...code('invalid_query') }),
    limit: Type.Optional(Digits(5, 'At most this many devices (1 to 10000, default 1000)')),
  },
  { additionalProperties: false, ...code('invalid_query') },
);
export const AuditQuery = Type.Object(
  {
    limit: Type.Optional(Digits(4, 'At most this many entries (1 to 1000, default 100)')),
    before: Type.Optional(Digits(15, 'The next page: entries older than this id (next_before of the previous page)')),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Only this operator's entries (the token's subject, exactly; `system` for the cloud's own)" })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z][A-Za-z0-9]*$', description: 'Only this action (the operationId, such as pauseRollout)', [EXPECTED]: 'an action name such as pauseRollout' })),
    since: Type.Optional({ ...IsoSince, description: 'Only entries at or after this time' }),
    until: Type.Optional({ ...IsoSince, description: 'Only entries before this time' }),
  },
  { additionalProperties: false, ...code('invalid_query') },
);
export const ConsoleLogin = Type.Object({ token: Type.String({ minLength: 1, maxLength: 8192, writeOnly: true, description: 'A super-user JWT' }) }, { title: 'ConsoleLogin', additionalProperties: false, ...code('invalid_body') });
export const RangeHeaders = Type.Object({
  range: Type.Optional(Type.String({ description: 'One byte range (bytes=first-last, first- or -suffix): 206; outside the image: 416; several ranges: the whole image' })),
  'if-range': Type.Optional(Type.String({ description: 'The ETag (or Last-Modified) the client holds: the range is served only while the image is that one' })),
  'if-none-match': Type.Optional(Type.String({ description: 'The ETag the client holds: 304' })),
});
export const OtaHeaders = Type.Object({
  'x-device-uuid': Type.Optional(
    Type.String({
      description: 'The device asking (optional, unauthenticated): staged rollouts and the inventory use it when it fits the pattern (docs/device-inventory.md)',
      allOf: [Type.String({ pattern: DEVICE_UUID_PATTERN })],
    }),
  ),
});

// ---- request bodies ----------------------------------------------------------------------------
export const ImageMetadata = Type.Object(
  {
    // No control characters or spaces: PostgreSQL refuses NUL in text (a 500), and a manifest URL a
    // device fetches must be what was parsed.
    url: Type.Optional(Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\u0000-\\u0020\\u007f]+$', format: 'uri', [EXPECTED]: 'an http or https URL' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, [EXPECTED]: 'a positive whole number of bytes' })),
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', [EXPECTED]: '64 hexadecimal digits' })),
    rollout: Type.Optional(RolloutBody),
    no_image: Type.Optional(
      Type.Literal(true, {
        description:
          'No image, on purpose: a version devices already run and never download (a factory image), so that the update check tells them they are up to date. Without it a release needs its url (or the image, PUT …/image)',
      }),
    ),
  },
  { title: 'ImageMetadata', additionalProperties: false, ...code('invalid_release_metadata'), [EXPECTED]: '{"url", "size"?, "sha256"?, "rollout"?} or {"no_image": true}' },
);
export type ImageMetadataBody = Static<typeof ImageMetadata>;

export const EnrollBody = Type.Object(
  {
    public_key: Type.String({ maxLength: 4096, description: 'PEM SPKI, ECDSA P-256' }),
    label: Type.Optional(Label),
  },
  { ...code('invalid_public_key') },
);

export const LogLevelName = Type.String({ pattern: `^\\s*${anyCase(LOG_LEVELS)}\\s*$`, description: `${LOG_LEVELS.join(', ')}, any case`, [EXPECTED]: LOG_LEVELS.join(', ') });
export const ConfigurationPatch = Type.Object({ logging: Type.Optional(LogLevelName) }, { title: 'ConfigurationPatch', additionalProperties: false, minProperties: 1 });

// ---- responses -----------------------------------------------------------------------------------
export const ErrorCodeSchema = Type.Unsafe<ErrorCode>({
  type: 'string',
  enum: Object.keys(ERROR_CATALOG),
  title: 'ErrorCode',
  description: 'The stable code of the error catalog (cloud/errors.ts)',
});
export const ErrorBody = Type.Object(
  { error: ErrorCodeSchema, message: Type.String(), details: Type.Optional(Type.Object({}, { additionalProperties: true })) },
  { title: 'Error', additionalProperties: false },
);

export const DateTime = Type.String({ format: 'date-time' });
export const Manifest = Type.Object(
  {
    class: Type.String(),
    product_hex: Type.String(),
    application: Type.String(),
    version: Type.String(),
    status: Type.Union([Type.Literal('RELEASED'), Type.Literal('REVOKED')]),
    released_at: DateTime,
    revoked_at: Type.Optional(DateTime),
    url: Type.Optional(Type.String()),
    size: Type.Optional(Type.Integer()),
    sha256: Type.Optional(Type.String()),
  },
  { title: 'Manifest', additionalProperties: false },
);
export type ManifestBody = Static<typeof Manifest>;
export const VersionList = Type.Object({ versions: Type.Array(Manifest) }, { title: 'VersionList', additionalProperties: false });
export const BackupStored = Type.Object({ message: Type.String(), last_backup_date: DateTime }, { title: 'BackupStored', additionalProperties: false });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Configuration = Type.Object({ logging: Type.Optional(Type.String()) }, { additionalProperties: true });
export const FunctionConfig = Type.Object(
  {
    function_name: Type.String(),
    effective_level: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l))),
    staged: Nullable(Type.Object({ version: Type.Integer(), configuration: Configuration, staged_at: DateTime }, { additionalProperties: false })),
    deployed: Nullable(Type.Object({ version: Type.Integer(), configuration: Configuration, deployed_at: DateTime }, { additionalProperties: false })),
    deployment: Nullable(
      Type.Object(
        { version: Type.Integer(), state: Type.Union([Type.Literal('IN_PROGRESS'), Type.Literal('COMPLETE')]), started_at: DateTime, ends_at: DateTime },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'FunctionConfig', additionalProperties: false },
);
export const FunctionConfigList = Type.Object({ functions: Type.Array(FunctionConfig) }, { title: 'FunctionConfigList', additionalProperties: false });
export const TrackFields = { class: Type.String(), product_hex: Type.String(), application: Type.String() };
/** What the inventory knows of a device's health, from its reports (docs/device-health.md). */
export const DeviceHealth = Type.Object(
  {
    last_report_at: { ...DateTime, description: 'When the cloud stored its newest report' },
    last_boot: Nullable(Type.Object({ at: DateTime, reason: Type.String(), version: Type.String() }, { additionalProperties: false })),
    last_crash: Nullable(
      Type.Object(
        { at: DateTime, kind: Type.String({ description: "The crash summary's kind, else the boot reason" }), message: Nullable(Type.String()), version: Type.String({ description: 'The version it was counted against' }) },
        { additionalProperties: false, description: 'The last unexpected reboot' },
      ),
    ),
    heap: Nullable(Type.Object({ at: DateTime, block: Type.Integer(), heap_min: Type.Integer() }, { additionalProperties: false, description: "The last heartbeat's largest free block and lowest free heap since boot, bytes" })),
    rssi: Nullable(Type.Integer({ description: "The last heartbeat's RSSI, dBm (null: Ethernet, or no heartbeat)" })),
    dropped: Nullable(Type.Integer({ description: 'Reports the board says it dropped' })),
  },
  { title: 'DeviceHealth', additionalProperties: false },
);
export const Device = Type.Object(
  {
    uuid: Type.String(),
    public_key: Type.String(),
    enrolled_at: DateTime,
    updated_at: DateTime,
    label: Type.Optional(Type.String()),
    groups: Type.Optional(Type.Array(Type.String())),
    last_check: Type.Optional(Nullable(Type.Object({ at: DateTime, version: Type.String(), ...TrackFields }, { additionalProperties: false }))),
    offer: Type.Optional(Nullable(Type.Object({ version: Type.String(), from_version: Type.String(), at: DateTime }, { additionalProperties: false }))),
    backup: Type.Optional(Nullable(Type.Object({ size: Type.Integer(), etag: Nullable(Type.String()), last_backup_date: DateTime }, { additionalProperties: false }))),
    health: Type.Optional(Nullable(DeviceHealth)),
  },
  { title: 'Device', additionalProperties: false },
);
export const DeviceList = Type.Object(
  { devices: Type.Array(Device), next_after: Nullable(Type.String({ description: 'Pass as after= for the next page; null on the last one' })) },
  { title: 'DeviceList', additionalProperties: false },
);
/** Devices per version per track, from each device's last OTA check (docs/device-inventory.md); a device that never checked is on no track. */
export const DeviceVersions = Type.Object(
  {
    tracks: Type.Array(
      Type.Object(
        {
          ...TrackFields,
          devices: Type.Integer({ description: 'Devices whose last check was on this track' }),
          versions: Type.Array(
            Type.Object(
              {
                version: Type.String(),
                devices: Type.Integer({ description: 'Devices that reported this version at their last check' }),
                status: Nullable(Type.Union([Type.Literal('RELEASED'), Type.Literal('REVOKED')], { description: "The release's status (null: no release of this version on the track)" })),
              },
              { additionalProperties: false },
            ),
            { description: 'Newest first' },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'DeviceVersions', additionalProperties: false },
);
const Outcomes = Type.Object({ pending: Type.Integer(), succeeded: Type.Integer(), failed: Type.Integer() }, { additionalProperties: false });
export const Rollout = Type.Object(
  {
    ...TrackFields,
    version: Type.String(),
    state: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    percent: Type.Integer(),
    effective_percent: Type.Integer({ description: 'The percentage with the schedule applied, now' }),
    next_step: Nullable(Type.Object({ at: DateTime, percent: Type.Integer() }, { additionalProperties: false, description: "The schedule's next raise (null: paused, no schedule, or at 100 %)" })),
    groups: Type.Array(Type.String()),
    step_percent: Nullable(Type.Integer()),
    step_every_seconds: Nullable(Type.Integer()),
    error_threshold_percent: Type.Integer(),
    min_reports: Type.Integer(),
    health_margin: Nullable(Type.Number({ description: 'The health gate (null: off): unexpected reboots per 1,000 device-hours over the previous release' })),
    health_min_device_hours: Type.Integer(),
    paused_reason: Nullable(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
    outcomes: Outcomes,
  },
  { title: 'Rollout', additionalProperties: false },
);
const OutcomeKind = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]);
/** The devices behind a release's outcome counts (docs/staged-rollouts.md). */
export const RolloutDevicesQuery = Type.Object(
  {
    outcome: Type.Optional({ ...OutcomeKind, description: 'Only the devices with this outcome', [EXPECTED]: 'pending, succeeded or failed' }),
    after: Type.Optional({ ...DeviceUuid, description: 'The next page: UUIDs after this one (next_after of the previous page)', ...code('invalid_query') }),
    limit: Type.Optional(Digits(5, 'At most this many devices (1 to 10000, default 1000)')),
  },
  { additionalProperties: false, ...code('invalid_query') },
);
export const RolloutDeviceList = Type.Object(
  {
    devices: Type.Array(
      Type.Object(
        {
          uuid: Type.String(),
          outcome: OutcomeKind,
          from_version: Type.String({ description: 'The version it ran when it was offered this release' }),
          offered_at: DateTime,
          settled_at: Nullable(DateTime),
          attempts: Type.Integer({ description: 'How many times it was offered the release' }),
        },
        { additionalProperties: false },
      ),
    ),
    next_after: Nullable(Type.String()),
  },
  { title: 'RolloutDeviceList', additionalProperties: false },
);
/** Which signature block of a hosted image verified, and the key that signed it (docs/secure-boot.md). */
export const SignedBy = Type.Object(
  {
    block: Type.Integer({ minimum: 0, maximum: 2, description: 'The signature block (0 to 2) that verified' }),
    key_digest: Type.String({ description: "The signing key's digest (64 hex digits)" }),
    key_label: Type.Optional(Type.String({ description: "The label the track's signing setting gives that key now" })),
  },
  { title: 'SignedBy', additionalProperties: false },
);
/** The answer to an image upload: the manifest, and which key signed the image (null: not signed). */
export const HostedRelease = Type.Object({ ...Manifest.properties, signed_by: Nullable(SignedBy) }, { title: 'HostedRelease', additionalProperties: false });
export const TrackSigning = Type.Object(
  {
    ...TrackFields,
    required: Type.Boolean(),
    keys: Type.Array(Type.Object({ digest: Type.String(), label: Type.Optional(Type.String()) }, { additionalProperties: false })),
    updated_at: Nullable({ ...DateTime, description: 'null: never set (signing off, no keys)' }),
  },
  { title: 'TrackSigning', additionalProperties: false },
);
export const Release = Type.Object(
  {
    ...Manifest.properties,
    hosted: Type.Boolean({ description: 'The cloud hosts the image (GET /images/…)' }),
    chip: Type.Optional(Type.String()),
    project: Type.Optional(Type.String()),
    signed_by: Nullable(SignedBy),
    rollout: Nullable(Rollout),
    outcomes: Outcomes,
  },
  { title: 'Release', additionalProperties: false },
);
export const ReleaseList = Type.Object({ versions: Type.Array(Release) }, { title: 'ReleaseList', additionalProperties: false });
export const TrackList = Type.Object(
  { tracks: Type.Array(Type.Object({ ...TrackFields, released: Type.Integer(), revoked: Type.Integer(), latest: Nullable(Type.String()) }, { additionalProperties: false })) },
  { title: 'TrackList', additionalProperties: false },
);
export const AuditList = Type.Object(
  {
    entries: Type.Array(
      Type.Object(
        {
          id: Type.Integer(),
          at: DateTime,
          actor: Type.String(),
          via: Type.Union([Type.Literal('api'), Type.Literal('console'), Type.Literal('system')]),
          action: Type.String(),
          method: Type.String(),
          path: Type.String(),
          status: Type.Integer(),
          details: Nullable(Type.Object({}, { additionalProperties: true })),
        },
        { additionalProperties: false },
      ),
    ),
    next_before: Nullable(Type.Integer()),
  },
  { title: 'AuditList', additionalProperties: false },
);
export const ConsoleSession = Type.Object(
  { subject: Nullable(Type.String()), expires_at: DateTime, csrf_token: Type.String({ description: 'Send as X-CSRF-Token on every console request that changes something' }) },
  { title: 'ConsoleSession', additionalProperties: false },
);
export const Health = Type.Object(
  {
    status: Type.Literal('ok'),
    version: Type.String(),
    uptime_seconds: Type.Integer(),
    store: Type.Object({ kind: Type.String(), state: Type.Union([Type.Literal('ok'), Type.Literal('failing')]) }, { additionalProperties: false }),
    worker: Type.Integer({ minimum: 1, description: 'The worker process of this `fleet serve` that answered, 1 to workers (docs/cloud-workers.md)' }),
    workers: Type.Integer({ minimum: 1, description: 'Worker processes of this `fleet serve` (WORKERS)' }),
  },
  { title: 'Health', additionalProperties: false },
);

/** The named shapes (their `title`): components.schemas of /openapi.json, referred to by $ref there. */
export const COMPONENTS = {
  Error: ErrorBody,
  ErrorCode: ErrorCodeSchema,
  Manifest,
  VersionList,
  ImageMetadata,
  BackupStored,
  ConfigurationPatch,
  FunctionConfig,
  FunctionConfigList,
  Device,
  DeviceHealth,
  DeviceList,
  Health,
  RolloutSettings: RolloutBody,
  DeviceGroups: DeviceGroupsBody,
  DeviceLabel: DeviceLabelBody,
  DeviceVersions,
  Rollout,
  RolloutDeviceList,
  Release,
  ReleaseList,
  SignedBy,
  HostedRelease,
  TrackSigning,
  TrackSigningSettings: TrackSigningBody,
  TrackList,
  AuditList,
  ConsoleLogin,
  ConsoleSession,
} as const;
