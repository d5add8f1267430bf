// Errors of the device-local API: a status, a stable code and a message, answered as
// {"error": code, "message": text} like the cloud's.

export class DeviceError extends Error {
  // A field (defined on the instance), not `this.name =` in the constructor: Error.prototype is
  // frozen in the firmware's preloaded archive, and assigning over its read-only `name` throws.
  override name = 'DeviceError';
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  /** Response headers the answer carries (Retry-After). */
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, code: string, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const errors = Object.freeze({
  badRequest: (code: string, message: string, details?: Record<string, unknown>) => new DeviceError(400, code, message, details),
  unauthorized: (code: string, message: string) => new DeviceError(401, code, message),
  forbidden: (code: string, message: string) => new DeviceError(403, code, message),
  notFound: (code: string, message: string) => new DeviceError(404, code, message),
  conflict: (code: string, message: string) => new DeviceError(409, code, message),
  tooLarge: (limitBytes: number) =>
    new DeviceError(413, 'backup_too_large', `The backup exceeds ${limitBytes} bytes`, { limit_bytes: limitBytes }),
  unavailable: (code: string, message: string) => new DeviceError(503, code, message),
});
