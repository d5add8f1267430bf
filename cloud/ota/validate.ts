// Path and query validation shared by the OTA check and the admin firmware routes.
import { ApiError } from '../errors.ts';
import type { ReleaseTrack } from '../store/types.ts';

export const PRODUCT_HEX = /^0x[0-9a-fA-F]{8}$/;
export const VERSION = /^\d{4}\.\d{2}\.\d{2}$/;
export const NAME = /^[A-Za-z0-9._-]{1,64}$/;

export function parseTrack(cls: string, productHex: string, application: string): ReleaseTrack {
  if (!NAME.test(cls)) throw new ApiError('invalid_name', { field: 'class' });
  if (!NAME.test(application)) throw new ApiError('invalid_name', { field: 'application' });
  if (!PRODUCT_HEX.test(productHex)) throw new ApiError('invalid_product_hex', { value: productHex.slice(0, 32) });
  // product_hex compares case-insensitively: it is stored and compared in lower case.
  return { class: cls, productHex: productHex.toLowerCase(), application };
}

/**
 * `YYYY.MM.bb`. A release being created must name a real month; a device's current_version only has
 * to have the shape (a development build may say 0000.00.00, and string order still works).
 */
export function parseVersion(value: string, field = 'version', opts: { release?: boolean } = {}): string {
  if (!VERSION.test(value)) throw new ApiError('invalid_version', { field, value: value.slice(0, 32) });
  const month = Number(value.slice(5, 7));
  if (opts.release && (month < 1 || month > 12)) {
    throw new ApiError('invalid_version', { field, value }, 'The month (MM) of a release must be 01 to 12');
  }
  return value;
}
