// Path and query checks shared by the OTA check and the admin firmware routes, from the declared
// shapes (cloud/schema/api.ts). The fast path's regular expressions are the same patterns.
import { DEVICE_UUID_PATTERN, Name, NewReleaseParams, ProductHex, TrackParams, Version } from '../schema/api.ts';
import { checked, checker, refusal } from '../schema/request.ts';
import type { ReleaseTrack } from '../store/types.ts';

export const PRODUCT_HEX = new RegExp(ProductHex.pattern!);
export const VERSION = new RegExp(Version.pattern!);
export const NAME = new RegExp(Name.pattern!);
/** A device UUID as enrolment takes it; an OTA check's X-Device-UUID is used only when it fits. */
export const DEVICE_UUID = new RegExp(DEVICE_UUID_PATTERN);

const checkTrack = checker(TrackParams);
const checkVersion = checker(Version);
const checkReleaseVersion = checker(NewReleaseParams.properties.version);

export function parseTrack(cls: string, productHex: string, application: string): ReleaseTrack {
  const t = checked(checkTrack, { class: cls, product_hex: productHex, application }, 'invalid_name');
  // product_hex compares case-insensitively: it is stored and compared in lower case.
  return { class: t.class, productHex: t.product_hex.toLowerCase(), application: t.application };
}

/**
 * `YYYY.MM.bb`. A release being created must name a real month; a device's current_version only has
 * to have the shape (a development build may say 0000.00.00, and string order still works).
 */
export function parseVersion(value: string, field = 'version', opts: { release?: boolean } = {}): string {
  const check = opts.release ? checkReleaseVersion : checkVersion;
  if (check(value)) return value;
  // A lone string schema does not know the parameter's name.
  throw refusal(check.problems().map((p) => ({ ...p, field })), 'invalid_version');
}
