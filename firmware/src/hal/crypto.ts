// Crypto HAL: where a platform plugs in accelerated SHA/AES/ECDSA (the ESP32's SHA, AES and ECDSA
// peripherals). The pure-JS implementation in core/crypto is the portable fallback and must pass the
// same known-answer tests inside XS (DESIGN.md section 2).

/** An incremental SHA-256. */
export interface Sha256 {
  update(data: Uint8Array): Sha256;
  /** The 32-byte digest; the hash may not be updated afterwards. */
  digest(): Uint8Array;
}

/**
 * AES-256-GCM, one message at a time, in chunks: bounded memory whatever the message size.
 * `update` returns the output for that chunk (same length as the input).
 */
export interface GcmStream {
  update(chunk: Uint8Array): Uint8Array;
  /** Encryption: returns the 16-byte tag. */
  finish(): Uint8Array;
}

export interface GcmDecryptStream {
  update(chunk: Uint8Array): Uint8Array;
  /** Throws if the tag does not verify. Callers must not trust any output before this returns. */
  verify(tag: Uint8Array): void;
}

export interface CryptoHal {
  sha256(): Sha256;
  hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array;
  gcmEncrypt(key: Uint8Array, iv: Uint8Array, aad: Uint8Array): GcmStream;
  gcmDecrypt(key: Uint8Array, iv: Uint8Array, aad: Uint8Array): GcmDecryptStream;
  /** ECDSA P-256 over SHA-256(message); DER-encoded signature. Deterministic (RFC 6979) is fine. */
  ecdsaP256Sign(privateKey: Uint8Array, message: Uint8Array): Uint8Array;
  /** The uncompressed (65-byte, 0x04 || X || Y) public key of a private key. */
  p256PublicKey(privateKey: Uint8Array): Uint8Array;
  randomBytes(length: number): Uint8Array;
}
