// The FFCE v1 backup blob (DESIGN.md section 3):
//   "FFCE" (46 46 43 45) | 12-byte random IV | AES-256-GCM ciphertext | 16-byte tag, AAD = "FFCE".
// Both directions stream with bounded memory, because a backup may be 512 KB and the board's heap
// is about 79 KB (DESIGN.md section 2): bodies go to and from flash in chunks.
import type { CryptoHal, GcmDecryptStream } from '../../hal/crypto.ts';
import { concatBytes, equalBytes } from '../bytes.ts';

export const FFCE_MAGIC: Uint8Array = Uint8Array.of(0x46, 0x46, 0x43, 0x45);
export const FFCE_IV_BYTES = 12;
export const FFCE_TAG_BYTES = 16;
/** Magic and IV: what precedes the ciphertext. */
export const FFCE_HEADER_BYTES = FFCE_MAGIC.length + FFCE_IV_BYTES;
/** Header and tag around an empty ciphertext. */
export const FFCE_MIN_BYTES = FFCE_HEADER_BYTES + FFCE_TAG_BYTES;
/**
 * 512 KB (spec 8): the largest blob the cloud stores, the same figure as the cloud's MAX_BACKUP_BYTES
 * (cloud/backup/ffce.ts; a test holds them equal). A local backup may be this less the FFCE framing.
 */
export const MAX_CLOUD_BLOB_BYTES = 524_288;

export type FfceErrorCode = 'bad_magic' | 'too_short' | 'auth_failed';

/** A blob that is not a valid FFCE v1 blob for this key; callers branch on `code`. */
export class FfceError extends Error {
  // A field (defined on the instance), not `this.name =` in the constructor: Error.prototype is
  // frozen in the firmware's preloaded archive, and assigning over its read-only `name` throws.
  override name = 'FfceError';
  readonly code: FfceErrorCode;

  constructor(code: FfceErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export interface FfceEncryptor {
  /** Magic and IV: write these first. */
  header(): Uint8Array;
  /** Ciphertext for this plaintext chunk (same length). */
  update(plaintext: Uint8Array): Uint8Array;
  /** The 16-byte tag that ends the blob. */
  finish(): Uint8Array;
}

export interface FfceDecryptor {
  /** Takes the blob in chunks of any size; returns the plaintext released so far. */
  update(blobChunk: Uint8Array): Uint8Array;
  /**
   * Checks the tag; throws FfceError ('too_short' or 'auth_failed'). No plaintext may be trusted,
   * applied or kept until this returns.
   */
  finish(): void;
}

/** `iv` is for known-answer tests only: in use it must be fresh random bytes for every blob. */
export function createFfceEncryptor(
  crypto: CryptoHal,
  key: Uint8Array,
  iv: Uint8Array = crypto.randomBytes(FFCE_IV_BYTES),
): FfceEncryptor {
  if (iv.length !== FFCE_IV_BYTES) throw new Error(`FFCE IV must be ${FFCE_IV_BYTES} bytes, got ${iv.length}`);
  const header = concatBytes(FFCE_MAGIC, iv);
  const gcm = crypto.gcmEncrypt(key, iv, FFCE_MAGIC);
  return {
    header: () => header.slice(),
    update: (plaintext) => gcm.update(plaintext),
    finish: () => gcm.finish(),
  };
}

/**
 * The blob's length is not known in advance, so the decryptor holds back the last 16 bytes it
 * has seen (they may be the tag) and decrypts everything before them: at most chunk + 16 bytes
 * are buffered. A blob that does not start with "FFCE" is rejected as soon as that is visible.
 */
export function createFfceDecryptor(crypto: CryptoHal, key: Uint8Array): FfceDecryptor {
  const header = new Uint8Array(FFCE_HEADER_BYTES);
  let headerLength = 0;
  let gcm: GcmDecryptStream | undefined;
  let heldBack: Uint8Array = new Uint8Array(0);

  /** Fills the header; returns what follows it in the chunk. */
  function readHeader(chunk: Uint8Array): Uint8Array {
    const taken = Math.min(FFCE_HEADER_BYTES - headerLength, chunk.length);
    header.set(chunk.subarray(0, taken), headerLength);
    headerLength += taken;
    const magicSeen = Math.min(headerLength, FFCE_MAGIC.length);
    if (!equalBytes(header.subarray(0, magicSeen), FFCE_MAGIC.subarray(0, magicSeen))) {
      throw new FfceError('bad_magic', 'not an FFCE v1 blob: the first 4 bytes must be "FFCE"');
    }
    if (headerLength === FFCE_HEADER_BYTES) {
      gcm = crypto.gcmDecrypt(key, header.subarray(FFCE_MAGIC.length), FFCE_MAGIC);
    }
    return chunk.subarray(taken);
  }

  return {
    update(blobChunk) {
      const body = gcm === undefined ? readHeader(blobChunk) : blobChunk;
      if (gcm === undefined) return new Uint8Array(0);
      const seen = concatBytes(heldBack, body);
      const releasable = seen.length - FFCE_TAG_BYTES;
      if (releasable <= 0) {
        heldBack = seen;
        return new Uint8Array(0);
      }
      heldBack = seen.slice(releasable);
      return gcm.update(seen.subarray(0, releasable));
    },

    finish() {
      if (gcm === undefined || heldBack.length < FFCE_TAG_BYTES) {
        throw new FfceError('too_short', `an FFCE blob has at least ${FFCE_MIN_BYTES} bytes`);
      }
      try {
        gcm.verify(heldBack);
      } catch {
        throw new FfceError('auth_failed', 'FFCE tag does not verify: wrong key, or the blob was altered');
      }
    },
  };
}

/** One-shot encryption, for data small enough to hold whole (provisioning records, tests). */
export function encryptFfce(crypto: CryptoHal, key: Uint8Array, plaintext: Uint8Array, iv?: Uint8Array): Uint8Array {
  const encryptor = createFfceEncryptor(crypto, key, iv);
  return concatBytes(encryptor.header(), encryptor.update(plaintext), encryptor.finish());
}

/** One-shot decryption; throws FfceError like the streaming decryptor. */
export function decryptFfce(crypto: CryptoHal, key: Uint8Array, blob: Uint8Array): Uint8Array {
  const decryptor = createFfceDecryptor(crypto, key);
  const plaintext = decryptor.update(blob);
  decryptor.finish();
  return plaintext;
}
