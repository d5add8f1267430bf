// The backup's size limit is one figure on each side (spec 8, 512 KB): the cloud's MAX_BACKUP_BYTES
// and the firmware's MAX_CLOUD_BLOB_BYTES, held equal here; the firmware's local backup is that less
// the FFCE framing, so that every backup a board accepts fits the cloud once encrypted.
import { expect, it } from 'vitest';
import { MAX_BACKUP_BYTES } from '../../cloud/backup/ffce.ts';
import { ERROR_CATALOG } from '../../cloud/errors.ts';
import { FFCE_MIN_BYTES, MAX_CLOUD_BLOB_BYTES } from '../../firmware/src/core/crypto/ffce.ts';
import { defaultSettings } from '../../firmware/src/core/settings.ts';

it('the cloud and the firmware agree on the largest backup, and a local backup fits it once framed', () => {
  expect(MAX_CLOUD_BLOB_BYTES).toBe(MAX_BACKUP_BYTES);
  expect(MAX_BACKUP_BYTES).toBe(512 * 1024);
  expect(defaultSettings('production').maxLocalBackupBytes + FFCE_MIN_BYTES).toBe(MAX_BACKUP_BYTES);
  expect(ERROR_CATALOG.backup_too_large.message).toBe('The backup exceeds 524288 bytes (512 KB)');
});
