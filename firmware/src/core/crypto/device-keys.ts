// Keys a device derives from its eFuse key (spec 2.2, DESIGN.md section 3). The SoftAP password,
// derived from the BSSID rather than the fuse key, is provisioning/softap-password.ts (spec 5.6).
// The core never sees the fuse key (DESIGN.md section 2): it gets an HMAC-SHA256 function keyed
// with it, like the ESP32-S3/C3 HMAC peripheral. HKDF's extract step is skipped because the fuse
// key is already uniformly random (RFC 5869 section 3.3), and because the peripheral can only use
// the fuse key as the HMAC key; so every key here is HKDF-Expand with PRK = the fuse key.
import { concatBytes, hexDecode, hexEncode, utf8Encode } from '../bytes.ts';

/** HMAC-SHA256 under a key the caller cannot read (the fuse HAL's `hmac`). */
export type KeyedHmac = (message: Uint8Array) => Uint8Array;

const SHA256_BYTES = 32;
const BACKUP_KEY_INFO = 'device-backup-v1';
const STORAGE_KEY_INFO = 'device-records-v1';
const IDENTITY_KEY_INFO = 'device-identity-v1';
/** 48 bytes = 32 + 16: reducing that mod n-1 has a negligible bias (FIPS 186-5 A.2.1). */
const IDENTITY_OKM_BYTES = 48;
/** The P-256 group order n (FIPS 186-5 / SEC 2 secp256r1). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/**
 * HKDF-Expand (RFC 5869 section 2.3) with the PRK hidden inside `hmac`:
 * T(i) = HMAC(T(i-1) || info || i), output = the first `length` bytes of T(1) || T(2) || ...
 */
export function hkdfExpandWithHmac(hmac: KeyedHmac, info: Uint8Array, length: number): Uint8Array {
  if (!Number.isInteger(length) || length < 0 || length > 255 * SHA256_BYTES) {
    throw new Error(`HKDF-Expand length must be 0..${255 * SHA256_BYTES}, got ${length}`);
  }
  const okm = new Uint8Array(length);
  let previous: Uint8Array = new Uint8Array(0);
  for (let counter = 1, written = 0; written < length; counter++) {
    previous = hmac(concatBytes(previous, info, Uint8Array.of(counter)));
    okm.set(previous.subarray(0, length - written), written);
    written += previous.length;
  }
  return okm;
}

/** The FFCE backup key: HMAC-SHA256(fuse key, "device-backup-v1" || 0x01). */
export function deriveBackupKey(fuseHmac: KeyedHmac): Uint8Array {
  return hkdfExpandWithHmac(fuseHmac, utf8Encode(BACKUP_KEY_INFO), 32);
}

/** The key for provisioning records at rest in flash; same construction, its own info label. */
export function deriveStorageKey(fuseHmac: KeyedHmac): Uint8Array {
  return hkdfExpandWithHmac(fuseHmac, utf8Encode(STORAGE_KEY_INFO), 32);
}

/** The device's P-256 signing key: d = (OS2IP(okm) mod (n-1)) + 1, so 1 <= d < n. */
export function deriveIdentityKey(fuseHmac: KeyedHmac): Uint8Array {
  const okm = hkdfExpandWithHmac(fuseHmac, utf8Encode(IDENTITY_KEY_INFO), IDENTITY_OKM_BYTES);
  const d = (BigInt('0x' + hexEncode(okm)) % (P256_ORDER - 1n)) + 1n;
  return hexDecode(d.toString(16).padStart(64, '0'));
}
