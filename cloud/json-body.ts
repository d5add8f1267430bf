// JSON request bodies for the admin and appconfig routes: parsed by express.json (64 KB limit) and
// refused with 415 when another media type is sent.
import type { Request } from 'express';
import { ApiError } from './errors.ts';

/** The largest JSON request body, in bytes (413 above it). */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024;

export function requireJsonBody(req: Request): unknown {
  const length = req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    throw new ApiError('unsupported_media_type', { content_type: req.headers['content-type']?.slice(0, 128) ?? null });
  }
  if (!hasBody || req.body === undefined) {
    throw new ApiError('invalid_body', undefined, 'A JSON request body is required');
  }
  return req.body;
}
