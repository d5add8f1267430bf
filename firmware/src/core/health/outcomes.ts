// How an update ends, by name (docs/device-health.md, "update"): every update the board takes reports
// its steps and exactly one end, from this catalog, whatever stopped it, a reset half way included.

export const UPDATE_STEPS = Object.freeze(['downloading', 'installing'] as const);
export type UpdateStep = (typeof UPDATE_STEPS)[number];

/** What an `update` report says: a step, or the end (`succeeded`: the new image marked valid; `failed`, with a reason). */
export const UPDATE_OUTCOMES = Object.freeze([...UPDATE_STEPS, 'succeeded', 'failed'] as const);
export type UpdateOutcome = (typeof UPDATE_OUTCOMES)[number];

export const UPDATE_FAILURES = Object.freeze([
  /** The image could not be downloaded whole (the connection broke past its resumes, a bad answer). */
  'download_failed',
  /** The download was not the size the manifest announced. */
  'size_mismatch',
  /** Its SHA-256 was not the manifest's. */
  'hash_mismatch',
  /** It is not an app image of this version and project (its esp_app_desc_t). */
  'image_mismatch',
  /** The passive slot refused it (esp_ota_write / esp_ota_end: checksum, segments, chip). */
  'image_invalid',
  /** Its Secure Boot v2 signature does not verify with a key the chip trusts. */
  'signature_invalid',
  /** Its secure_version is below the chip's anti-rollback counter. */
  'secure_version_too_low',
  /** It is larger than the passive slot. */
  'no_space',
  /** The running image is not confirmed yet: esp_ota_begin refuses (ESP_ERR_OTA_ROLLBACK_INVALID_STATE). */
  'refused_unconfirmed',
  /** The new image did not come up (it failed to start, or reset before confirming itself): the bootloader went back. */
  'rolled_back',
  /** The board lost power or reset before the update ended; the report names the step it was at. */
  'interrupted',
] as const);
export type UpdateFailure = (typeof UPDATE_FAILURES)[number];

/** The OTA client's error codes (core/ota/client.ts OtaError) that end an update the board had started. */
const FROM_OTA_ERROR: Readonly<Record<string, UpdateFailure>> = Object.freeze({
  download_failed: 'download_failed',
  size_mismatch: 'size_mismatch',
  hash_mismatch: 'hash_mismatch',
  image_mismatch: 'image_mismatch',
  image_invalid: 'image_invalid',
  signature_invalid: 'signature_invalid',
  secure_version_too_low: 'secure_version_too_low',
  no_space: 'no_space',
  refused_unconfirmed: 'refused_unconfirmed',
});

/** The failure an OTA error code names; an error the catalog does not know is the slot refusing the image. */
export function failureOf(code: string | undefined): UpdateFailure {
  return (code !== undefined ? FROM_OTA_ERROR[code] : undefined) ?? 'image_invalid';
}
