// The cloud's one error catalog: every error a client can see has a stable code, an HTTP status and a
// message. Routes throw `ApiError(code)`; one middleware (and the OTA fast path) turn it into
// `{"error": code, "message": text, "details"?: {...}}` (DESIGN.md section 4). Never a stack trace.
import { HEALTH_REPORT_MAX_BYTES } from './health-definitions.ts';
import { MAX_BACKUP_BYTES } from './limits.ts';

export const ERROR_CATALOG = {
  // generic
  route_not_found: { status: 404, message: 'No such route' },
  bad_request: { status: 400, message: 'The request is malformed' },
  invalid_json: { status: 400, message: 'The request body is not valid JSON' },
  invalid_body: { status: 400, message: 'The request body is not a JSON object of the expected shape' },
  unsupported_media_type: { status: 415, message: 'The request body must be application/json' },
  payload_too_large: { status: 413, message: 'The request body is too large' },
  invalid_uuid: { status: 400, message: 'The device UUID is not valid (1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit)' },
  internal_error: { status: 500, message: 'Internal server error' },

  // HTTP transport (docs/cloud-limits.md): answered for any route, some on the raw socket
  method_not_allowed: { status: 405, message: 'This method is not allowed on this route' },
  request_timeout: { status: 408, message: 'The request was not received in time' },
  expectation_failed: { status: 417, message: 'Only Expect: 100-continue is supported' },
  header_too_large: { status: 431, message: 'The request headers are too large' },
  body_not_allowed: { status: 400, message: 'A GET or HEAD request must not have a body' },
  store_saturated: { status: 503, message: 'The service is saturated; retry after the Retry-After delay' },

  // JWT super user (appconfig, admin)
  missing_token: { status: 401, message: 'An Authorization: Bearer token is required' },
  invalid_token: { status: 401, message: 'The bearer token is invalid or expired' },
  not_superuser: { status: 403, message: 'The caller is not a super user' },

  // OTA (spec 4.1)
  invalid_product_hex: { status: 400, message: 'product_hex must be 0x followed by 8 hexadecimal digits' },
  invalid_version: { status: 400, message: 'The version must have the form YYYY.MM.bb' },
  invalid_name: { status: 400, message: 'class and application must be 1 to 64 of A-Z a-z 0-9 . _ -' },
  firmware_not_found: { status: 404, message: 'No RELEASED firmware exists for this class, product and application' },
  current_version_unknown: {
    status: 404,
    message: 'current_version is not a known release and no newer RELEASED version exists',
  },
  current_version_revoked: {
    status: 409,
    message: 'current_version is REVOKED and no newer RELEASED version exists',
  },

  // Device backups (spec 4.1, 5.1, 7)
  missing_header: { status: 400, message: 'A required header is missing' },
  invalid_header: { status: 400, message: 'A header has an invalid value' },
  invalid_base64: { status: 400, message: 'A header is not valid Base64' },
  invalid_content_type: { status: 400, message: 'Content-Type must be application/octet-stream' },
  invalid_backup_format: { status: 400, message: 'The body is not an FFCE backup blob' },
  device_uuid_mismatch: { status: 403, message: 'X-Device-UUID does not match the device in the path' },
  unknown_device: { status: 401, message: 'The device is not enrolled' },
  invalid_signature: { status: 401, message: 'The device signature does not verify' },
  timestamp_out_of_window: { status: 401, message: 'X-Device-Timestamp is outside the acceptance window' },
  nonce_replayed: { status: 401, message: 'X-Device-Nonce was already used' },
  backup_too_large: { status: 413, message: `The backup exceeds ${MAX_BACKUP_BYTES} bytes (512 KB)` },
  backup_not_found: { status: 404, message: 'No backup is stored for this device' },

  // Device health reports (docs/device-health.md)
  invalid_health_report: { status: 400, message: 'The body is not a health report of the expected shape' },
  health_report_too_large: { status: 413, message: `A health report is at most ${HEALTH_REPORT_MAX_BYTES} bytes` },

  // Runtime configuration (spec 2.7, 3.4)
  invalid_function_name: { status: 400, message: 'The function name must start with svc-func-' },
  function_not_found: { status: 404, message: 'No such function' },
  invalid_log_level: { status: 400, message: 'The log level is not valid' },
  unknown_configuration_key: { status: 400, message: 'The configuration has an unknown key' },
  no_staged_configuration: { status: 404, message: 'No staged configuration exists for this function' },
  configuration_not_found: { status: 404, message: 'No configuration exists for this function' },
  deployment_in_progress: { status: 409, message: 'A deployment is in progress for this function' },

  // Admin API
  invalid_public_key: { status: 400, message: 'public_key must be a PEM SPKI ECDSA P-256 public key' },
  device_not_found: { status: 404, message: 'No such device' },
  release_exists: { status: 409, message: 'This firmware version already exists' },
  release_not_found: { status: 404, message: 'No such firmware version' },
  invalid_release_metadata: { status: 400, message: 'The firmware image metadata is not valid' },
  image_required: {
    status: 400,
    message: 'A release needs its image: a url devices download it from, or PUT …/image for the cloud to host it; a version devices already run and never download is released with "no_image": true',
  },

  // Hosted firmware images and their release checks (docs/firmware-images.md)
  image_too_large: { status: 413, message: 'The image is larger than the OTA slot' },
  invalid_image: { status: 400, message: 'The image is not an ESP-IDF app image the bootloader would accept' },
  image_chip_mismatch: { status: 400, message: 'The image is built for another chip than the release' },
  image_version_mismatch: { status: 400, message: "The image's app descriptor names another version than the release" },
  image_project_mismatch: { status: 400, message: "The image's app descriptor names another project than the release" },
  image_sha256_mismatch: { status: 400, message: 'The image SHA-256 is not the one it carries or the one declared' },
  version_older_than_released: { status: 409, message: 'A newer version is already RELEASED on this track' },
  image_not_found: { status: 404, message: 'The cloud hosts no image for this version' },
  range_not_satisfiable: { status: 416, message: 'The range is outside the image' },

  // Signed images (docs/secure-boot.md, The cloud): a track whose signing setting requires them
  invalid_track_signing: { status: 400, message: 'The signing setting is not valid' },
  image_not_signed: { status: 400, message: 'The track requires signed images; this image carries no signature sector' },
  image_signature_damaged: { status: 400, message: "The image's signature block is damaged" },
  image_tampered: { status: 400, message: 'The image changed after it was signed: its digest is not the one signed' },
  image_signer_not_trusted: { status: 400, message: 'The image is not signed by a key the track trusts' },
  image_signature_invalid: { status: 400, message: "The image's RSA-PSS signature does not verify with its key" },
  signing_requires_image: { status: 409, message: 'The track requires signed images: release it with its image, which the cloud checks' },

  // Staged rollouts, device groups, inventory, audit (docs/staged-rollouts.md, docs/device-inventory.md)
  rollout_not_found: { status: 404, message: 'This release has no rollout' },
  invalid_rollout: { status: 400, message: 'The rollout settings are not valid' },
  invalid_device_groups: { status: 400, message: 'The device groups are not valid' },
  invalid_query: { status: 400, message: 'A query parameter is not valid' },

  // Operator console (docs/operator-console.md)
  session_expired: { status: 401, message: 'The console session has ended or expired: log in again' },
  csrf_check_failed: { status: 403, message: 'A console request that changes something must carry the session CSRF token and come from the console' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** Codes any request can get, whatever its route; the OpenAPI document lists them once, not per operation. */
export const TRANSPORT_ERROR_CODES: readonly ErrorCode[] = [
  'route_not_found',
  'method_not_allowed',
  'request_timeout',
  'expectation_failed',
  'header_too_large',
  'body_not_allowed',
  'store_saturated',
];

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** An error a caller can branch on: `err.code` is stable, `err.status` the HTTP status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, details?: Record<string, unknown>, message?: string) {
    const entry = ERROR_CATALOG[code];
    super(message ?? entry.message);
    this.name = 'ApiError';
    this.code = code;
    this.status = entry.status;
    this.details = details;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.code, message: this.message };
    if (this.details) body.details = this.details;
    return body;
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
