/// <reference path="../native/native.d.ts" />
// The CryptoHal through PSA (native/fw_crypto_*.c): ESP-IDF 6 builds Mbed TLS 4, whose legacy
// mbedtls_sha256_* / mbedtls_gcm_* calls are gone; its PSA drivers run SHA-256 and AES on the
// ESP32-S3's accelerators and the bignum work of ECDSA on its MPI accelerator. Must pass the same
// known-answer vectors as the portable fallback (firmware/test-cases/crypto-vectors.cases.ts).
import type { CryptoHal, GcmDecryptStream, GcmStream, Sha256 } from '../../../hal/crypto.ts';
import { p256SignatureDer } from './ecdsa-der.ts';

const sha256Create = native('xs_fw_sha256_create');
const sha256Update = native('xs_fw_sha256_update');
const sha256Finish = native('xs_fw_sha256_finish');
const hmacSha256 = native('xs_fw_hmac_sha256');
const gcmCreate = native('xs_fw_gcm_create');
const gcmUpdate = native('xs_fw_gcm_update');
const gcmFinish = native('xs_fw_gcm_finish');
const gcmVerify = native('xs_fw_gcm_verify');
const p256Sign = native('xs_fw_p256_sign');
const p256PublicKey = native('xs_fw_p256_public_key');
const hardwareRandom = native('xs_fw_random');

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

function checkGcm(key: Uint8Array, iv: Uint8Array): void {
  if (key.length !== KEY_BYTES) throw new Error(`AES-256-GCM key must be ${KEY_BYTES} bytes, got ${key.length}`);
  if (iv.length !== IV_BYTES) throw new Error(`GCM IV must be ${IV_BYTES} bytes, got ${iv.length}`);
}

/** A PSA operation used once: a second finish would be a use after free in C, so it is refused here. */
function once(what: string): () => void {
  let used = false;
  return () => {
    if (used) throw new Error(`${what} already finished`);
    used = true;
  };
}

function sha256(): Sha256 {
  const operation = sha256Create();
  let done = false;
  const hash: Sha256 = {
    update(data) {
      if (done) throw new Error('SHA-256 already finished');
      sha256Update(operation, data);
      return hash;
    },
    digest() {
      if (done) throw new Error('SHA-256 already finished');
      done = true;
      return new Uint8Array(sha256Finish(operation));
    },
  };
  return hash;
}

function gcmEncrypt(key: Uint8Array, iv: Uint8Array, aad: Uint8Array): GcmStream {
  checkGcm(key, iv);
  const operation = gcmCreate(key, iv, aad, true);
  const finished = once('GCM stream');
  return {
    update: (chunk) => new Uint8Array(gcmUpdate(operation, chunk)),
    finish() {
      finished();
      return new Uint8Array(gcmFinish(operation));
    },
  };
}

function gcmDecrypt(key: Uint8Array, iv: Uint8Array, aad: Uint8Array): GcmDecryptStream {
  checkGcm(key, iv);
  const operation = gcmCreate(key, iv, aad, false);
  const finished = once('GCM stream');
  return {
    update: (chunk) => new Uint8Array(gcmUpdate(operation, chunk)),
    verify(tag) {
      finished();
      // psa_aead_verify compares in constant time (PSA crypto API 1.1, section 10.4).
      if (tag.length !== TAG_BYTES || !gcmVerify(operation, tag)) throw new Error('GCM authentication failed');
    },
  };
}

export function createPsaCrypto(): CryptoHal {
  return {
    sha256,
    hmacSha256: (key, message) => new Uint8Array(hmacSha256(key, message)),
    gcmEncrypt,
    gcmDecrypt,
    ecdsaP256Sign: (privateKey, message) => p256SignatureDer(new Uint8Array(p256Sign(privateKey, message))),
    p256PublicKey: (privateKey) => new Uint8Array(p256PublicKey(privateKey)),
    randomBytes: (length) => new Uint8Array(hardwareRandom(length)),
  };
}

/** The hardware RNG alone, for the portable fallback (core/crypto/pure.ts takes a random source). */
export const hardwareRandomBytes = (length: number): Uint8Array => new Uint8Array(hardwareRandom(length));
