// The product's known-answer vectors (test/vectors/device-crypto.json, read through
// test/helpers/vectors.ts), through the portable core.
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { vectors } from '../../test/helpers/vectors.ts';
import { base64Decode, concatBytes, hexDecode, hexEncode, utf8Encode } from '../src/core/bytes.ts';
import { deriveBackupKey, deriveIdentityKey, hkdfExpandWithHmac } from '../src/core/crypto/device-keys.ts';
import { decryptFfce, encryptFfce } from '../src/core/crypto/ffce.ts';
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { softApPassword } from '../src/core/provisioning/softap-password.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { equal, ok, type TestCase } from './assert.ts';

const crypto = Object.freeze(createPureJsCrypto(seededRandom(7)));
const fuseHmac = (keyHex: string) => (m: Uint8Array) => crypto.hmacSha256(hexDecode(keyHex), m);

export const cryptoVectorCases: readonly TestCase[] = Object.freeze([
  {
    name: 'SoftAP password from the BSSID (spec 5.6)',
    async run() {
      for (const v of vectors.softap_password) equal(softApPassword(v.bssid), v.password, v.bssid);
    },
  },
  {
    name: 'backup key = HKDF-Expand(fuse key, device-backup-v1)',
    async run() {
      equal(hexEncode(deriveBackupKey(fuseHmac(vectors.backup_key.fuse_key_hex))), vectors.backup_key.key_hex, 'backup key');
    },
  },
  {
    name: 'FFCE blob byte for byte, and back',
    async run() {
      const v = vectors.ffce_blob;
      const blob = encryptFfce(crypto, hexDecode(v.key_hex), utf8Encode(v.plaintext_utf8), hexDecode(v.iv_hex));
      equal(hexEncode(blob), v.blob_hex, 'blob');
      equal(blob.length, v.blob_length, 'length');
      const plain = decryptFfce(crypto, hexDecode(v.key_hex), hexDecode(v.blob_hex));
      equal(hexEncode(crypto.sha256().update(plain).digest()), v.etag_sha256_hex, 'etag of the plaintext');
    },
  },
  {
    name: 'device identity key from the fuse key',
    async run() {
      const v = vectors.device_identity_key;
      equal(hexEncode(hkdfExpandWithHmac(fuseHmac(v.fuse_key_hex), utf8Encode(v.info), 48)), v.okm_hex, 'okm');
      const d = deriveIdentityKey(fuseHmac(v.fuse_key_hex));
      equal(hexEncode(d), v.private_key_hex, 'private key');
      equal(hexEncode(crypto.p256PublicKey(d)), v.public_key_uncompressed_hex, 'public key');
    },
  },
  {
    name: 'device signature: ours verifies, and so does the vector',
    async run() {
      const v = vectors.device_signature;
      const message = concatBytes(base64Decode(v.nonce_base64), utf8Encode(v.timestamp));
      const pub = hexDecode(v.public_key_uncompressed_hex);
      const ours = crypto.ecdsaP256Sign(hexDecode(v.private_key_hex), message);
      ok(p256.verify(ours, sha256(message), pub, { prehash: false, format: 'der' }), 'our signature to verify');
      ok(p256.verify(base64Decode(v.signature_der_base64), sha256(message), pub, { prehash: false, format: 'der', lowS: false }), 'the vector signature to verify');
    },
  },
]);
