// The configurator's error catalog: every error the page can see has a stable code, an HTTP status
// and a message; answered as `{"error": code, "message": text, "details"?: {...}}`, like the cloud's
// and the controllers' (DESIGN.md section 4). Never a stack trace.
import type { ErrorRequestHandler, Response } from 'express';
import { ERROR_CATALOG } from '../../cloud/errors.ts';

const { route_not_found, invalid_json, invalid_body, unsupported_media_type, payload_too_large, internal_error } = ERROR_CATALOG;

export const CONFIGURATOR_ERRORS = {
  // the generic ones are the cloud's
  route_not_found,
  invalid_json,
  invalid_body,
  unsupported_media_type,
  payload_too_large,
  internal_error,
  // docs/configurator-security.md
  forbidden_host: { status: 421, message: 'This server answers only for its own address (Host header)' },
  cross_site_request: { status: 403, message: 'Refused: the request does not come from the configurator page' },
  too_many_sessions: { status: 503, message: 'This configurator keeps no more browser log-ins: log out in a browser no longer used' },
  // the site
  invalid_configuration: { status: 400, message: 'The configuration is not valid' },
  configuration_too_large: { status: 413, message: 'The configuration is too large' },
  invalid_controller: { status: 400, message: 'The controller is not valid' },
  invalid_record: { status: 400, message: 'The record is not valid' },
  invalid_settings: { status: 400, message: 'The site settings are not valid' },
  controller_not_found: { status: 404, message: 'No such controller in this site' },
  record_not_found: { status: 404, message: 'No such record in this site' },
  name_taken: { status: 409, message: 'Another controller of this site has that name' },
  // reaching a controller (docs/configurator-controller-access.md)
  not_logged_in: { status: 401, message: 'Log in to this controller first (its admin password)' },
  controller_unreachable: { status: 502, message: 'The controller did not answer' },
  controller_timeout: { status: 504, message: 'The controller did not answer in time' },
  controller_bad_answer: { status: 502, message: 'The controller answered something that is not its API' },
} as const;

export type ErrorCode = keyof typeof CONFIGURATOR_ERRORS;

export class ConfiguratorError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message ?? CONFIGURATOR_ERRORS[code].message);
    this.status = CONFIGURATOR_ERRORS[code].status;
  }

  static tooLarge(bytes: number, limit: number): ConfiguratorError {
    return new ConfiguratorError('configuration_too_large', `The configuration is ${bytes} bytes; a controller keeps at most ${limit} bytes (512 KB less the backup framing)`, { bytes, limit });
  }
}

/**
 * An answer relayed from a controller: its status and its own error code and message, with the
 * controller named, so the page shows what the device said ("try again in 30 s").
 */
export class ControllerAnswerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function sendError(res: Response, status: number, code: string, message: string, details?: Record<string, unknown>): void {
  res.status(status).set('cache-control', 'no-store').json({ error: code, message, ...(details ? { details } : {}) });
}

/** Express's own errors (body parser) and ours, as JSON; anything else is a 500 without its stack. */
export function errorMiddleware(log: (message: string) => void): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof ConfiguratorError) return sendError(res, err.status, err.code, err.message, err.details);
    if (err instanceof ControllerAnswerError) return sendError(res, err.status, err.code, err.message, err.details);
    const e = err as { type?: string; status?: number; limit?: number };
    if (e.type === 'entity.too.large') return sendError(res, 413, 'payload_too_large', `The request body is larger than ${e.limit} bytes`, { limit: e.limit });
    if (e.type === 'entity.parse.failed') return sendError(res, 400, 'invalid_json', CONFIGURATOR_ERRORS.invalid_json.message);
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return sendError(res, e.status, 'invalid_body', CONFIGURATOR_ERRORS.invalid_body.message);
    log(`internal error: ${err instanceof Error ? err.message : String(err)}`);
    sendError(res, 500, 'internal_error', CONFIGURATOR_ERRORS.internal_error.message);
  };
}
