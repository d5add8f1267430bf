// The portable device crypto (firmware/src/core): byte codecs, the pure-JS crypto HAL, device keys
// and FFCE blobs, against the product's known-answer vectors (test/vectors/device-crypto.json, their
// source in test/vectors/README.md; docs/overview.md, "Device crypto") and against Node's OpenSSL. Node APIs appear here only, never in the core.
import { createCipheriv, createHash, createHmac, randomBytes, verify } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  base64Decode, base64Encode, concatBytes, constantTimeEqual, equalBytes, hexDecode, hexEncode, utf8Decode, utf8Encode,
} from '../../firmware/src/core/bytes.ts';
import {
  deriveBackupKey, deriveIdentityKey, deriveStorageKey, hkdfExpandWithHmac, type KeyedHmac,
} from '../../firmware/src/core/crypto/device-keys.ts';
import {
  createFfceDecryptor, createFfceEncryptor, decryptFfce, encryptFfce, FFCE_MIN_BYTES, FfceError, type FfceErrorCode,
} from '../../firmware/src/core/crypto/ffce.ts';
import { createPureJsCrypto } from '../../firmware/src/core/crypto/pure.ts';
import { softApPassword } from '../../firmware/src/core/provisioning/softap-password.ts';
import { vectors, VECTORS_FILE } from '../helpers/vectors.ts';

const hal = createPureJsCrypto((length) => new Uint8Array(randomBytes(length)));

/** Deterministic sizes and chunkings (mulberry32), so a failure reproduces. */
function seededRandom(seed: number): (below: number) => number {
  return (below) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

function split(data: Uint8Array, nextChunkSize: () => number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < data.length; ) {
    const size = Math.max(1, nextChunkSize());
    chunks.push(data.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

function fuseHmacFor(fuseKeyHex: string): KeyedHmac {
  return (message) => new Uint8Array(createHmac('sha256', Buffer.from(fuseKeyHex, 'hex')).update(message).digest());
}

function nodeGcm(key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array) {
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad);
  return { ciphertext: Buffer.concat([cipher.update(plaintext), cipher.final()]), tag: cipher.getAuthTag() };
}

function ffceErrorCode(action: () => unknown): FfceErrorCode | undefined {
  try {
    action();
  } catch (error) {
    if (error instanceof FfceError) return error.code;
    throw error;
  }
  return undefined;
}

describe('the known-answer vectors', () => {
  it('are the copy test/vectors/README.md names (its SHA-256), in the repository', () => {
    const readme = readFileSync(new URL('../vectors/README.md', import.meta.url), 'utf8');
    const named = /SHA-256 of the copy[^`]*`([0-9a-f]{64})`/.exec(readme)?.[1];
    expect(named, 'the README gives the digest').toBeDefined();
    const file = fileURLToPath(new URL(`../../${VECTORS_FILE}`, import.meta.url));
    expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(named);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(vectors);
  });
});

describe('bytes', () => {
  it('encodes UTF-8 like Buffer and decodes it back', () => {
    for (const text of ['', 'Deck light', 'Grüße', '€ 5', '日本語', '🙂 ok', '\u{10ffff}', '\ufeffbom', 'lone \ud800 x']) {
      expect(Buffer.from(utf8Encode(text))).toEqual(Buffer.from(text, 'utf8'));
      expect(utf8Decode(Buffer.from(text, 'utf8'))).toBe(Buffer.from(text, 'utf8').toString('utf8'));
    }
  });

  it('decodes UTF-8 strictly: valid exactly when Buffer round-trips it unchanged', () => {
    const next = seededRandom(1);
    for (let n = 0; n < 3000; n++) {
      const bytes = Uint8Array.from({ length: 1 + next(6) }, () => (next(2) ? 0x80 + next(0x80) : next(0x100)));
      const viaBuffer = Buffer.from(bytes).toString('utf8');
      if (Buffer.from(viaBuffer, 'utf8').equals(bytes)) expect(utf8Decode(bytes)).toBe(viaBuffer);
      else expect(() => utf8Decode(bytes), hexEncode(bytes)).toThrow(/invalid UTF-8/);
    }
    for (const bad of ['80', 'c080', 'c1bf', 'e08080', 'eda080', 'edbfbf', 'f4908080', 'f5808080', 'e282', 'ff']) {
      expect(() => utf8Decode(hexDecode(bad)), bad).toThrow(/invalid UTF-8/);
    }
  });

  it('round-trips hex and Base64 like Buffer', () => {
    for (let length = 0; length < 70; length++) {
      const bytes = new Uint8Array(randomBytes(length));
      expect(hexEncode(bytes)).toBe(Buffer.from(bytes).toString('hex'));
      expect(hexDecode(hexEncode(bytes))).toEqual(bytes);
      expect(base64Encode(bytes)).toBe(Buffer.from(bytes).toString('base64'));
      expect(base64Decode(base64Encode(bytes))).toEqual(bytes);
    }
    expect(hexDecode('ABcd')).toEqual(Uint8Array.of(0xab, 0xcd));
  });

  it('rejects malformed hex and Base64', () => {
    for (const bad of ['a', 'zz', ' 00', '0x00', '00 ']) expect(() => hexDecode(bad), bad).toThrow(/invalid hex/);
    for (const bad of ['YQ', 'YQ=', 'YQ===', 'Y===', '====', 'YR==', 'YWI=YQ==', 'YW=j', 'Y Q=', 'YQ==\n', '-_8=', 'YWJ=']) {
      expect(() => base64Decode(bad), bad).toThrow(/invalid Base64/);
    }
  });

  it('compares in constant time and concatenates', () => {
    const a = Uint8Array.of(1, 2, 3, 4);
    expect(constantTimeEqual(a, Uint8Array.of(1, 2, 3, 4))).toBe(true);
    expect(constantTimeEqual(a, Uint8Array.of(0, 2, 3, 4))).toBe(false);
    expect(constantTimeEqual(a, Uint8Array.of(1, 2, 3, 5))).toBe(false);
    expect(constantTimeEqual(a, Uint8Array.of(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
    expect(equalBytes(concatBytes(a.subarray(0, 1), new Uint8Array(0), a.subarray(1)), a)).toBe(true);
  });
});

describe('device keys (DESIGN.md section 3, spec 5.6)', () => {
  it('derives every SoftAP password vector, from text or bytes', () => {
    for (const { bssid, password } of vectors.softap_password) {
      expect(softApPassword(bssid)).toBe(password);
      expect(softApPassword(bssid.toLowerCase().replaceAll(':', '-'))).toBe(password);
      expect(softApPassword(hexDecode(bssid.replaceAll(':', '')))).toBe(password);
    }
    for (const bad of ['24:0A:C4:12:34', '24:0A:C4:12:34:56:78', '24:0A-C4:12:34:56', '240AC4123456', 'GG:0A:C4:12:34:56']) {
      expect(() => softApPassword(bad), bad).toThrow(/BSSID/);
    }
    expect(() => softApPassword(new Uint8Array(5))).toThrow(/BSSID/);
  });

  it('derives the backup key vector and the storage key from the fuse HMAC alone', () => {
    const fuseHmac = fuseHmacFor(vectors.backup_key.fuse_key_hex);
    expect(hexEncode(deriveBackupKey(fuseHmac))).toBe(vectors.backup_key.key_hex);
    const storageInfo = concatBytes(utf8Encode('device-records-v1'), Uint8Array.of(1));
    expect(deriveStorageKey(fuseHmac)).toEqual(fuseHmac(storageInfo));
  });

  it('derives the identity key vector: okm, private key, public key', () => {
    const v = vectors.device_identity_key;
    const fuseHmac = fuseHmacFor(v.fuse_key_hex);
    expect(hexEncode(hkdfExpandWithHmac(fuseHmac, utf8Encode(v.info), 48))).toBe(v.okm_hex);
    const privateKey = deriveIdentityKey(fuseHmac);
    expect(hexEncode(privateKey)).toBe(v.private_key_hex);
    expect(hexEncode(hal.p256PublicKey(privateKey))).toBe(v.public_key_uncompressed_hex);
  });
});

describe('pure-JS crypto HAL', () => {
  const sig = vectors.device_signature;
  const signedMessage = concatBytes(base64Decode(sig.nonce_base64), utf8Encode(sig.timestamp));

  it('signs nonce || timestamp so that OpenSSL verifies it, deterministically (RFC 6979)', () => {
    const privateKey = hexDecode(sig.private_key_hex);
    expect(hexEncode(hal.p256PublicKey(privateKey))).toBe(sig.public_key_uncompressed_hex);
    const signature = hal.ecdsaP256Sign(privateKey, signedMessage);
    const publicKey = { key: sig.public_key_spki_pem, dsaEncoding: 'der' as const };
    expect(verify('sha256', signedMessage, publicKey, signature)).toBe(true);
    expect(hal.ecdsaP256Sign(privateKey, signedMessage)).toEqual(signature);
    expect(verify('sha256', signedMessage, publicKey, base64Decode(sig.signature_der_base64))).toBe(true);
  });

  it('hashes incrementally and computes HMAC-SHA256 like Node', () => {
    const data = new Uint8Array(randomBytes(1000));
    const hash = hal.sha256();
    for (const chunk of split(data, () => 37)) hash.update(chunk);
    expect(Buffer.from(hash.digest())).toEqual(createHash('sha256').update(data).digest());
    const key = new Uint8Array(randomBytes(32));
    expect(Buffer.from(hal.hmacSha256(key, data))).toEqual(createHmac('sha256', key).update(data).digest());
  });

  it('streams AES-256-GCM exactly like OpenSSL, whatever the chunking', () => {
    const next = seededRandom(2);
    for (let n = 0; n < 150; n++) {
      const [key, iv] = [new Uint8Array(randomBytes(32)), new Uint8Array(randomBytes(12))];
      const aad = new Uint8Array(randomBytes(next(40)));
      const plaintext = new Uint8Array(randomBytes(next(2001)));
      const chunkSize = n % 5 === 0 ? () => 1 : () => 1 + next(n % 2 ? 40 : 300);
      const expected = nodeGcm(key, iv, aad, plaintext);
      const encryptor = hal.gcmEncrypt(key, iv, aad);
      const ciphertext = concatBytes(...split(plaintext, chunkSize).map((chunk) => encryptor.update(chunk)));
      expect(Buffer.from(ciphertext)).toEqual(expected.ciphertext);
      expect(Buffer.from(encryptor.finish())).toEqual(expected.tag);
      const decryptor = hal.gcmDecrypt(key, iv, aad);
      const decrypted = concatBytes(...split(ciphertext, chunkSize).map((chunk) => decryptor.update(chunk)));
      expect(decrypted).toEqual(plaintext);
      expect(() => decryptor.verify(expected.tag)).not.toThrow();
      const tampered = hal.gcmDecrypt(key, iv, aad);
      tampered.update(ciphertext);
      expect(() => tampered.verify(Uint8Array.from(expected.tag, (byte, i) => (i === 15 ? byte ^ 1 : byte)))).toThrow();
    }
  });

  it('streams a 512 KB message in 1 KB chunks', () => {
    const [key, iv, aad] = [new Uint8Array(randomBytes(32)), new Uint8Array(randomBytes(12)), utf8Encode('FFCE')];
    const plaintext = new Uint8Array(randomBytes(512 * 1024));
    const expected = nodeGcm(key, iv, aad, plaintext);
    const encryptor = hal.gcmEncrypt(key, iv, aad);
    const decryptor = hal.gcmDecrypt(key, iv, aad);
    for (let offset = 0; offset < plaintext.length; offset += 1024) {
      const ciphertext = encryptor.update(plaintext.subarray(offset, offset + 1024));
      expect(equalBytes(ciphertext, expected.ciphertext.subarray(offset, offset + 1024))).toBe(true);
      expect(equalBytes(decryptor.update(ciphertext), plaintext.subarray(offset, offset + 1024))).toBe(true);
    }
    expect(Buffer.from(encryptor.finish())).toEqual(expected.tag);
    expect(() => decryptor.verify(expected.tag)).not.toThrow();
  });

  it('takes its random bytes from the injected source only', () => {
    const counting = createPureJsCrypto((length) => new Uint8Array(length).fill(7));
    expect(counting.randomBytes(5)).toEqual(new Uint8Array(5).fill(7));
    expect(() => createPureJsCrypto(() => new Uint8Array(1)).randomBytes(4)).toThrow(/random source/);
  });
});

describe('FFCE v1 blobs (DESIGN.md section 3)', () => {
  const v = vectors.ffce_blob;
  const key = hexDecode(v.key_hex);
  const blob = hexDecode(v.blob_hex);
  const plaintext = utf8Encode(v.plaintext_utf8);

  it('reproduces the vector blob byte for byte and decrypts it', () => {
    expect(hexEncode(encryptFfce(hal, key, plaintext, hexDecode(v.iv_hex)))).toBe(v.blob_hex);
    expect(blob.length).toBe(v.blob_length);
    expect(utf8Decode(decryptFfce(hal, key, blob))).toBe(v.plaintext_utf8);
    expect(hexEncode(hal.sha256().update(plaintext).digest())).toBe(v.etag_sha256_hex);
  });

  it('decrypts any chunking, holding back exactly the 16 possible tag bytes', () => {
    const next = seededRandom(3);
    const big = new Uint8Array(randomBytes(5000));
    const bigBlob = encryptFfce(hal, key, big);
    expect(bigBlob.subarray(4, 16)).not.toEqual(new Uint8Array(12)); // a random IV
    for (const [whole, expected] of [[blob, plaintext], [bigBlob, big]] as const) {
      for (let n = 0; n < 40; n++) {
        const decryptor = createFfceDecryptor(hal, key);
        const outputs: Uint8Array[] = [];
        let [seen, released] = [0, 0];
        for (const chunk of split(whole, n % 4 === 0 ? () => 1 : () => 1 + next(n % 2 ? 20 : 700))) {
          outputs.push(decryptor.update(chunk));
          seen += chunk.length;
          released += outputs[outputs.length - 1]!.length;
          if (released !== Math.max(0, seen - FFCE_MIN_BYTES)) expect.fail(`released ${released} of ${seen} bytes`);
        }
        decryptor.finish();
        expect(concatBytes(...outputs)).toEqual(expected);
      }
    }
  });

  it('streams encryption: header, chunks, tag', () => {
    const encryptor = createFfceEncryptor(hal, key, hexDecode(v.iv_hex));
    const parts = [encryptor.header(), ...split(plaintext, () => 7).map((chunk) => encryptor.update(chunk))];
    expect(hexEncode(concatBytes(...parts, encryptor.finish()))).toBe(v.blob_hex);
    expect(decryptFfce(hal, key, encryptFfce(hal, key, new Uint8Array(0))).length).toBe(0);
  });

  it('rejects tampering, a wrong key, a bad magic and short blobs with typed errors', () => {
    for (const index of [0, 3, 4, 15, 16, 60, blob.length - 17, blob.length - 16, blob.length - 1]) {
      const tampered = blob.slice();
      tampered[index] = tampered[index]! ^ 0x01;
      expect(ffceErrorCode(() => decryptFfce(hal, key, tampered)), `byte ${index}`).toBe(index < 4 ? 'bad_magic' : 'auth_failed');
    }
    expect(ffceErrorCode(() => decryptFfce(hal, new Uint8Array(32), blob))).toBe('auth_failed');
    for (let length = 0; length < FFCE_MIN_BYTES; length++) {
      expect(ffceErrorCode(() => decryptFfce(hal, key, blob.subarray(0, length))), `length ${length}`).toBe('too_short');
    }
    expect(ffceErrorCode(() => decryptFfce(hal, key, utf8Encode('PK\u0003\u0004 not a backup at all, long enough')))).toBe('bad_magic');
  });
});

describe('portability of firmware/src/core (DESIGN.md section 2)', () => {
  // In the mutation-testing sandbox the sources are Stryker's instrumented copies (which use
  // globalThis and process); `npm test` checks the real ones.
  it.skipIf(fileURLToPath(import.meta.url).includes('/.stryker-tmp/'))('uses no Node, DOM or missing-in-XS globals', () => {
    const core = new URL('../../firmware/src/core/', import.meta.url);
    const files = [
      new URL('bytes.ts', core),
      ...readdirSync(new URL('crypto/', core)).map((name) => new URL(`crypto/${name}`, core)),
      new URL('provisioning/softap-password.ts', core),
    ];
    const forbidden = /Buffer|process\.|node:|TextEncoder|TextDecoder|atob|btoa|globalThis\.crypto/;
    for (const file of files) expect(readFileSync(file, 'utf8'), fileURLToPath(file)).not.toMatch(forbidden);
  });
});
