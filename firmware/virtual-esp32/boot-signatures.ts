// Secure Boot v2 and anti-rollback at boot on a virtual ESP32-S3 (docs/secure-boot.md, "The virtual
// chip"): what the ROM checks of the second-stage bootloader and what ESP-IDF's bootloader checks of
// each app slot once SECURE_BOOT_EN is burned, logged as they log it (the ROM's raw lines, the
// bootloader's `secure_boot_v2` and `esp_image` tags), each refusal with the verdict's reason. The
// signature blocks themselves are checked by firmware/image/secure-boot.ts against the digests the
// chip's eFuses hold (efuse.ts secureBootKeys). Also: how a virtual board's fuses are set up for
// secure boot at its first start (the keys' digests, SECURE_BOOT_EN, SECURE_VERSION).
import type { KeyObject } from 'node:crypto';
import { hex32 } from '../image/bytes.ts';
import { publicKeyDigest, rsaPublicKeyOf, SecureBootError, signatureSectorOffset, verifySignedImage, type SecureBootVerdict, type VerifyFailure } from '../image/secure-boot.ts';
import type { BootLog } from './boot-log.ts';
import { type Efuses } from './efuse.ts';
import { BLOCK0_FIELDS, EfuseError, SECURE_BOOT_DIGEST_PURPOSES } from '../chip/esp32s3-efuse.ts';

/** Why an image is refused, in a few words, by the verdict's kind. */
export const REFUSAL_REASONS: Readonly<Record<VerifyFailure, string>> = Object.freeze({
  unsigned: 'not signed',
  untrusted: 'signed by a key whose digest is not burned in eFuse',
  revoked: 'signed by a revoked key',
  tampered: 'the image changed after signing',
  damaged: 'its signature block is damaged',
  bad_signature: 'its signature does not verify',
});

/** A refusal worded for a log line and a BootFailure: `not signed (no signature sector at …)`. */
export function refusal(verdict: SecureBootVerdict): string {
  const f = verdict.failure ?? { kind: 'unsigned' as const, message: 'no verdict' };
  return `${REFUSAL_REASONS[f.kind]} (${f.message})`;
}

/** The digest slots the ROM can verify with: burned and not revoked ("Valid secure boot key blocks: 0 1"). */
function validKeySlots(efuses: Efuses): number[] {
  return efuses
    .secureBootKeys()
    .filter((k) => !k.revoked)
    .map((k) => k.slot!);
}

/**
 * The ROM's check of the second-stage bootloader with SECURE_BOOT_EN (ets_secure_boot_verify_signature):
 * its signature sector follows the image on the next 4 KB boundary. Logs as the ESP32-S3 ROM does
 * (raw lines); on failure the ROM stops here ("ets_main.c 329") and the chip resets into the same
 * check again. Returns the reason when it fails, undefined when it verified.
 */
export function romVerifyBootloader(read: (offset: number, length: number) => Uint8Array, imageLength: number, efuses: Efuses, log: BootLog): string | undefined {
  log.raw(`Valid secure boot key blocks: ${validKeySlots(efuses).join(' ')}`.trimEnd());
  const verdict = verifySignedImage(read, signatureSectorOffset(imageLength), efuses.secureBootKeys());
  if (verdict.ok) {
    log.raw('secure boot verification succeeded');
    return undefined;
  }
  const why = refusal(verdict);
  log.raw(`bootloader ${why}`);
  log.raw('secure boot verification failed');
  log.raw('ets_main.c 329');
  return why;
}

/**
 * The bootloader's check of an app slot with SECURE_BOOT_EN (esp_image_format.c verify_secure_boot_signature,
 * secure_boot_signatures_bootloader.c): the signature sector at signatureSectorOffset(image length)
 * inside the partition. Returns the reason when the slot is refused.
 */
export function verifyAppSignature(read: (offset: number, length: number) => Uint8Array, imageLength: number, efuses: Efuses, log: BootLog, address: number): string | undefined {
  log.info('esp_image', 'Verifying image signature...');
  log.info('secure_boot_v2', 'Verifying with RSA-PSS...');
  const verdict = verifySignedImage(read, signatureSectorOffset(imageLength), efuses.secureBootKeys());
  if (verdict.ok) {
    log.info('secure_boot_v2', 'Signature verified successfully!');
    return undefined;
  }
  const why = refusal(verdict);
  log.error('secure_boot_v2', `image at ${hex32(address, 0)}: ${why}`);
  log.error('secure_boot_v2', 'Secure Boot V2 verification failed.');
  log.error('esp_image', 'Secure boot signature verification failed');
  // The image itself verified (checksum, SHA-256) before the signature was looked at.
  log.warn('esp_image', 'image valid, signature bad');
  return why;
}

/** load_image with CONFIG_SECURE_BOOT_V2_ENABLED on a chip whose SECURE_BOOT_EN is burned. */
export function logSecureBootEnabled(log: BootLog): void {
  log.info('secure_boot_v2', 'enabling secure boot v2...');
  log.info('secure_boot_v2', 'secure boot v2 is already enabled, continuing..');
}

/**
 * esp_efuse_update_secure_version: burns SECURE_VERSION up to `secureVersion` when it is higher
 * (only the new bits), logging as ESP-IDF does; a version beyond the field is refused and logged.
 */
export function updateSecureVersion(efuses: Efuses, secureVersion: number, log: BootLog): void {
  if (secureVersion <= efuses.secureVersion) return;
  try {
    efuses.burnSecureVersion(secureVersion);
    log.info('efuse', `Anti-rollback is set. eFuse field is updated(${secureVersion}).`);
  } catch (err) {
    if (!(err instanceof EfuseError)) throw err;
    log.error('efuse', `Max secure version is ${BLOCK0_FIELDS.SECURE_VERSION[1]}. Given ${secureVersion} version can not be written.`);
  }
}

export interface SecureBootFuses {
  /** Up to three keys (private or public): their digests go into SECURE_BOOT_DIGEST0.. in that order. */
  keys?: readonly KeyObject[];
  /** SECURE_VERSION to burn (the anti-rollback counter). */
  secureVersion?: number;
}

/**
 * A board's fuses set up for secure boot, as `espefuse burn-key-digest` and `burn-efuse` leave a
 * chip: each key's digest in the next free key block (purpose USER, nothing burned) as
 * SECURE_BOOT_DIGEST0, 1, 2, then SECURE_BOOT_EN; SECURE_VERSION raised when asked. One-way: run
 * once, when the chip's eFuse model is made. Refuses more than three keys, a key that is not
 * RSA-3072, the same key twice and a chip without free key blocks, before burning anything.
 */
export function burnSecureBootFuses(efuses: Efuses, o: SecureBootFuses): void {
  const keys = o.keys ?? [];
  const [, width] = BLOCK0_FIELDS.SECURE_VERSION;
  if (o.secureVersion !== undefined && (!Number.isInteger(o.secureVersion) || o.secureVersion < 0 || o.secureVersion > width)) throw new EfuseError(`SECURE_VERSION counts 0 to ${width}, not ${o.secureVersion}`);
  if (keys.length > SECURE_BOOT_DIGEST_PURPOSES.length) throw new SecureBootError(`the chip has ${SECURE_BOOT_DIGEST_PURPOSES.length} secure boot key digest slots: ${keys.length} keys given`);
  const digests = keys.map((k) => publicKeyDigest(rsaPublicKeyOf(k)));
  const seen = new Set<string>();
  for (const d of digests) {
    if (seen.has(d.toString('hex'))) throw new SecureBootError(`the same secure boot key is given twice (digest ${d.toString('hex')})`);
    seen.add(d.toString('hex'));
  }
  const free = efuses.keys.map((k, i) => (k.purpose === 'USER' && !k.writeProtected && k.key.every((b) => b === 0) ? i : -1)).filter((i) => i >= 0);
  if (free.length < digests.length) throw new EfuseError(`${digests.length} secure boot key digests need ${digests.length} free key blocks; the chip has ${free.length}`);
  digests.forEach((d, i) => efuses.burnKey(free[i]!, SECURE_BOOT_DIGEST_PURPOSES[i]!, d));
  if (digests.length > 0) efuses.enableSecureBoot();
  if (o.secureVersion !== undefined && o.secureVersion > efuses.secureVersion) efuses.burnSecureVersion(o.secureVersion);
}
