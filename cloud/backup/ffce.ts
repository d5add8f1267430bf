// FFCE v1 framing as the cloud sees it (DESIGN.md section 3): ASCII "FFCE" | 12-byte IV | AES-256-GCM
// ciphertext | 16-byte tag. The cloud cannot decrypt; it checks the magic and the minimum length.
import { MAX_BACKUP_BYTES } from '../limits.ts';

export { MAX_BACKUP_BYTES };
export const FFCE_MAGIC = Buffer.from('FFCE', 'ascii'); // 46 46 43 45
export const FFCE_IV_BYTES = 12;
export const FFCE_TAG_BYTES = 16;
/** Magic + IV + tag: an empty plaintext still makes a 32-byte blob. */
export const FFCE_MIN_BYTES = FFCE_MAGIC.length + FFCE_IV_BYTES + FFCE_TAG_BYTES;

export function isFfceBlob(blob: Buffer): boolean {
  return isFfceFraming(blob.length, blob);
}

/** The framing of a blob of `length` bytes whose first bytes are `head` (a body read away keeps only those). */
export function isFfceFraming(length: number, head: Buffer): boolean {
  return length >= FFCE_MIN_BYTES && length <= MAX_BACKUP_BYTES && head.subarray(0, FFCE_MAGIC.length).equals(FFCE_MAGIC);
}
