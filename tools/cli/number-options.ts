// The number options of the `fleet` commands, parsed one way (commander argParsers): a refused value
// is a usage error (exit 2) whose sentence says what is expected and what was given.
import { InvalidArgumentError } from 'commander';
import { BLOCK0_FIELDS } from '../../firmware/chip/esp32s3-efuse.ts';

/** 0, 1, 2…: digits only, within a safe integer. */
export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`must be a whole number: ${value}`);
  return n;
}

/** 1, 2, 3… */
export function positiveWholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`must be a positive whole number: ${value}`);
  return n;
}

/** The most SECURE_VERSION can count to: its eFuse field's width, one burned bit per version. */
const SECURE_VERSION_MAX = BLOCK0_FIELDS.SECURE_VERSION[1];

/** An anti-rollback version (esp_app_desc_t secure_version, the eFuse SECURE_VERSION): 0 to 16. */
export function secureVersionNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > SECURE_VERSION_MAX) throw new InvalidArgumentError(`must be a whole number from 0 to ${SECURE_VERSION_MAX} (SECURE_VERSION has ${SECURE_VERSION_MAX} bits): ${value}`);
  return n;
}
