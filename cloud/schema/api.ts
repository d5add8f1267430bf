// Every shape of the cloud API, declared once (docs/schema-library.md): the request checks, the
// TypeScript types (Static<…>) and GET /openapi.json all come from these. Catalog codes stay in
// cloud/errors.ts; a parameter only names which one a bad value gets (x-error-code).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
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

// ---- request bodies ----------------------------------------------------------------------------
export const ImageMetadata = Type.Object(
  {
    // No control characters or spaces: PostgreSQL refuses NUL in text (a 500), and a manifest URL a
    // device fetches must be what was parsed.
    url: Type.Optional(Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\u0000-\\u0020\\u007f]+$', format: 'uri', [EXPECTED]: 'an http or https URL' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, [EXPECTED]: 'a positive whole number of bytes' })),
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', [EXPECTED]: '64 hexadecimal digits' })),
  },
  { title: 'ImageMetadata', additionalProperties: false, ...code('invalid_release_metadata'), [EXPECTED]: '{"url"?, "size"?, "sha256"?}' },
);
export type ImageMetadataBody = Static<typeof ImageMetadata>;

export const EnrollBody = Type.Object(
  { public_key: Type.String({ maxLength: 4096, description: 'PEM SPKI, ECDSA P-256' }) },
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

const DateTime = Type.String({ format: 'date-time' });
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

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
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
export const Device = Type.Object(
  {
    uuid: Type.String(),
    public_key: Type.String(),
    enrolled_at: DateTime,
    updated_at: DateTime,
    backup: Type.Optional(Nullable(Type.Object({ size: Type.Integer(), etag: Nullable(Type.String()), last_backup_date: DateTime }, { additionalProperties: false }))),
  },
  { title: 'Device', additionalProperties: false },
);
export const DeviceList = Type.Object({ devices: Type.Array(Device) }, { title: 'DeviceList', additionalProperties: false });
export const Health = Type.Object(
  {
    status: Type.Literal('ok'),
    version: Type.String(),
    uptime_seconds: Type.Integer(),
    store: Type.Object({ kind: Type.String(), state: Type.Union([Type.Literal('ok'), Type.Literal('failing')]) }, { additionalProperties: false }),
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
  DeviceList,
  Health,
} as const;
