// The device-local API's error catalog: every error a client can see has a stable code and an HTTP
// status here, answered as {"error": code, "message": text, "details"?: {...}} like the cloud's
// (cloud/errors.ts). The messages are written where the error is thrown (they name the limit, the
// field, the reason). docs/firmware-api.md lists every code; a test holds the two equal both ways.

const CATALOG = {
  // The listener (platform/moddable/hal/http-*.ts): before the core sees a request
  bad_request: [400],
  bad_request_target: [400],
  incomplete_request: [400],
  request_timeout: [408],
  body_timeout: [408],
  length_required: [411],
  uri_too_long: [414],
  expectation_failed: [417],
  headers_too_large: [431],
  board_busy: [503],
  internal_error: [500],
  // Requests and their bodies
  invalid_path: [400],
  invalid_uuid: [400],
  invalid_json: [400],
  json_too_deep: [400],
  body_too_large: [413],
  route_not_found: [404],
  method_not_allowed: [405],
  // The visual-token and the admin password (docs/firmware-visual-token.md)
  missing_visual_token: [401],
  invalid_visual_token: [401],
  /** 400: a new password outside 8 to 128 characters; 401: a login with the wrong one. */
  invalid_password: [400, 401],
  too_many_attempts: [429],
  // Provisioning mode and its tokens (spec 5)
  provisioning_mode_off: [409],
  provisioning_softap_only: [403],
  invalid_token_request: [400],
  unknown_uuid: [404],
  mac_not_registered: [403],
  mac_not_station: [403],
  invalid_provisioning_token: [401],
  provisioning_token_expired: [401],
  provisioning_token_wrong_station: [403],
  provisioning_token_not_allowed: [403],
  provisioning_token_not_on_softap: [403],
  provisioning_token_scope: [403],
  // Records
  invalid_record: [400],
  record_not_found: [404],
  injected_fault: [500],
  // The local backup
  no_backup: [404],
  backup_too_large: [413],
  backup_busy: [409],
  // The cloud backup and the cloud URL
  invalid_cloud_url: [400],
  not_provisioned: [409],
  cloud_unreachable: [409],
  clock_not_synchronized: [503],
  no_local_backup: [404],
  no_cloud_backup: [404],
  backup_decrypt_failed: [422],
  cloud_error: [502],
} as const satisfies Record<string, readonly number[]>;
// Frozen through, as every module-level value of a preloaded module must be (the build checks it).
for (const statuses of Object.values(CATALOG)) Object.freeze(statuses);
export const DEVICE_ERRORS = Object.freeze(CATALOG);

export type DeviceErrorCode = keyof typeof DEVICE_ERRORS;
/** Every status the catalog gives. */
export type DeviceErrorStatus = (typeof DEVICE_ERRORS)[DeviceErrorCode][number];

/** The codes the catalog answers with status S. */
export type CodeWith<S extends DeviceErrorStatus> = { [K in DeviceErrorCode]: S extends (typeof DEVICE_ERRORS)[K][number] ? K : never }[DeviceErrorCode];

export class DeviceError extends Error {
  // A field (defined on the instance), not `this.name =` in the constructor: Error.prototype is
  // frozen in the firmware's preloaded archive, and assigning over its read-only `name` throws.
  override name = 'DeviceError';
  readonly status: number;
  readonly code: DeviceErrorCode;
  readonly details: Record<string, unknown> | undefined;
  /** Response headers the answer carries (Retry-After). */
  readonly headers: Record<string, string> | undefined;

  /** `status` is one the catalog gives `code` (errors.* below type the pair). */
  constructor(status: DeviceErrorStatus, code: DeviceErrorCode, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const errors = Object.freeze({
  badRequest: (code: CodeWith<400>, message: string, details?: Record<string, unknown>) => new DeviceError(400, code, message, details),
  unauthorized: (code: CodeWith<401>, message: string) => new DeviceError(401, code, message),
  forbidden: (code: CodeWith<403>, message: string) => new DeviceError(403, code, message),
  notFound: (code: CodeWith<404>, message: string) => new DeviceError(404, code, message),
  conflict: (code: CodeWith<409>, message: string) => new DeviceError(409, code, message),
  tooLarge: (limitBytes: number) =>
    new DeviceError(413, 'backup_too_large', `The backup exceeds ${limitBytes} bytes`, { limit_bytes: limitBytes }),
  unavailable: (code: CodeWith<503>, message: string) => new DeviceError(503, code, message),
});
