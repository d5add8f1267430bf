// The portable crypto HAL on @noble/* (DESIGN.md section 2): the fallback for platforms without
// crypto peripherals, and the reference the accelerated HALs must agree with on the known-answer
// vectors (DESIGN.md section 3).
import { sha256 } from '@noble/hashes/sha2.js';
import { hmac } from '@noble/hashes/hmac.js';
import { p256 } from '@noble/curves/nist.js';
import type { CryptoHal, Sha256 } from '../../hal/crypto.ts';
import { createGcmDecryptStream, createGcmEncryptStream } from './gcm.ts';

/** A source of cryptographically secure random bytes, e.g. the ESP32's hardware RNG. */
export type RandomSource = (length: number) => Uint8Array;

function incrementalSha256(): Sha256 {
  const hash = sha256.create();
  const wrapper: Sha256 = {
    update(data) {
      hash.update(data);
      return wrapper;
    },
    digest: () => hash.digest(),
  };
  return wrapper;
}

/**
 * The pure-JS HAL. Randomness is injected rather than read from a global because XS on a board
 * has no `crypto.getRandomValues`: the platform passes its hardware RNG.
 */
export function createPureJsCrypto(randomSource: RandomSource): CryptoHal {
  return {
    sha256: incrementalSha256,
    hmacSha256: (key, message) => hmac(sha256, key, message),
    gcmEncrypt: createGcmEncryptStream,
    gcmDecrypt: createGcmDecryptStream,
    // noble v2 hashes the message with SHA-256 itself (`prehash` defaults to true) and derives k
    // per RFC 6979 (no `extraEntropy`); `lowS` is its default. DESIGN.md section 3: DER output.
    ecdsaP256Sign: (privateKey, message) => p256.sign(message, privateKey, { format: 'der' }),
    p256PublicKey: (privateKey) => p256.getPublicKey(privateKey, false),
    randomBytes(length) {
      const bytes = randomSource(length);
      if (bytes.length !== length) throw new Error(`random source returned ${bytes.length} bytes, wanted ${length}`);
      return bytes;
    },
  };
}
