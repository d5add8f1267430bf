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
export const DeviceUuid = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,64}$', description: 'Device UUID', [EXPECTED]: '1 to 64 of A-Z a-z 0-9 . _ : -', ...code('invalid_uuid') });
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

// ---- the signed-request headers (spec 5.1; parsed by cloud/auth/device-signature.ts) -------------
export const DeviceSignatureHeaders = Type.Object({
  'x-device-uuid': Type.String({ description: 'Must equal {uuid}' }),
  'x-device-nonce': Type.String({ description: 'Base64 of 32 random bytes, never reused', pattern: '^[A-Za-z0-9+/]{43}=$' }),
  'x-device-timestamp': Type.String({ description: 'ISO 8601 UTC ending in Z; accepted within ±300 s', pattern: 'Z$' }),
  'x-device-signature': Type.String({ description: 'Base64 DER ECDSA P-256 signature, SHA-256 over nonce bytes || UTF-8 timestamp' }),
});
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
