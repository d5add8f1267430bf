// The crypto glue (DESIGN.md section 3): the FFCE blob decrypted in any chunking, each way a blob is
// refused (with its code), the key labels, and the BSSID forms the SoftAP password accepts.
import { concatBytes, hexDecode, utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { deriveStorageKey, hkdfExpandWithHmac } from '../src/core/crypto/device-keys.ts';
import { createFfceDecryptor, createFfceEncryptor, decryptFfce, encryptFfce, FFCE_MIN_BYTES, FfceError } from '../src/core/crypto/ffce.ts';
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { softApPassword } from '../src/core/provisioning/softap-password.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { deepEqual, equal, ok, rejects, type TestCase } from './assert.ts';

const crypto = createPureJsCrypto(seededRandom(11));
const KEY = hexDecode('11'.repeat(32));
const IV = hexDecode('22'.repeat(12));
const TEXT = 'the configuration of a controller, long enough to span a few chunks: ' + 'x'.repeat(100);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return err instanceof FfceError ? `${err.name} ${err.code}` : `other ${String(err)}`;
  }
  return 'none';
}

/** Decrypts a blob fed in pieces of `size` bytes. */
function inPieces(blob: Uint8Array, size: number): Uint8Array {
  const d = createFfceDecryptor(crypto, KEY);
  const out: Uint8Array[] = [];
  for (let at = 0; at < blob.length; at += size) out.push(d.update(blob.subarray(at, at + size)));
  d.finish();
  return concatBytes(...out);
}

export const ffceCases: TestCase[] = [
  {
    name: 'FFCE: magic, IV, ciphertext and tag; decrypts whole and fed 1, 3, 15, 16, 17 or 64 bytes at a time',
    async run() {
      const blob = encryptFfce(crypto, KEY, utf8Encode(TEXT), IV);
      equal(FFCE_MIN_BYTES, 32, 'magic + IV + tag');
      equal(blob.length, TEXT.length + 32, 'the length');
      deepEqual(Array.from(blob.subarray(0, 16)), [0x46, 0x46, 0x43, 0x45, ...IV], 'magic then IV');
      const e = createFfceEncryptor(crypto, KEY, IV);
      const h = e.header();
      h[0] = 0;
      equal(e.header()[0], 0x46, 'header() hands out a copy');
      for (const size of [1, 3, 15, 16, 17, 64, blob.length]) equal(utf8Decode(inPieces(blob, size)), TEXT, `${size} bytes at a time`);
      equal(utf8Decode(decryptFfce(crypto, KEY, encryptFfce(crypto, KEY, new Uint8Array(0), IV))), '', 'an empty plaintext');
      await rejects(async () => createFfceEncryptor(crypto, KEY, IV.subarray(1)), /IV must be 12/, 'an IV of 11 bytes');
    },
  },
  {
    name: 'FFCE refusals: bad_magic as soon as a magic byte is wrong, too_short under 32 bytes, auth_failed for a changed byte or another key',
    async run() {
      const blob = encryptFfce(crypto, KEY, utf8Encode(TEXT), IV);
      for (const i of [0, 1, 2, 3]) {
        const bad = blob.slice();
        bad[i] = bad[i]! ^ 1;
        equal(codeOf(() => decryptFfce(crypto, KEY, bad)), 'FfceError bad_magic', `magic byte ${i}`);
        const d = createFfceDecryptor(crypto, KEY);
        equal(codeOf(() => d.update(bad.subarray(0, i + 1))), 'FfceError bad_magic', `magic byte ${i}, seen at once`);
      }
      const short = encryptFfce(crypto, KEY, new Uint8Array(0), IV);
      equal(codeOf(() => decryptFfce(crypto, KEY, short.subarray(0, 31))), 'FfceError too_short', '31 bytes');
      equal(codeOf(() => decryptFfce(crypto, KEY, short.subarray(0, 10))), 'FfceError too_short', 'a header cut short');
      equal(codeOf(() => decryptFfce(crypto, KEY, new Uint8Array(0))), 'FfceError too_short', 'nothing');
      equal(codeOf(() => decryptFfce(crypto, KEY, short)), 'none', '32 bytes');
      for (const i of [4, 15, 16, blob.length - 17, blob.length - 1]) {
        const bad = blob.slice();
        bad[i] = bad[i]! ^ 0x80;
        equal(codeOf(() => decryptFfce(crypto, KEY, bad)), 'FfceError auth_failed', `byte ${i} changed`);
      }
      equal(codeOf(() => decryptFfce(crypto, hexDecode('12'.repeat(32)), blob)), 'FfceError auth_failed', 'another key');
      equal(codeOf(() => decryptFfce(crypto, KEY, blob.subarray(0, blob.length - 1))), 'FfceError auth_failed', 'the last byte missing');
      // Nothing is released from a blob that is too short to hold a tag yet.
      const d = createFfceDecryptor(crypto, KEY);
      equal(d.update(blob.subarray(0, 31)).length, 0, 'no plaintext before a tag can follow');
      equal(d.update(blob.subarray(31, 40)).length, 40 - 32, 'then only what cannot be the tag');
    },
  },
  {
    name: 'key derivation: the records key is HKDF-Expand(fuse key, "device-records-v1"); HKDF-Expand lengths 0..8160',
    async run() {
      const fuse = (m: Uint8Array) => crypto.hmacSha256(hexDecode('33'.repeat(32)), m);
      deepEqual(deriveStorageKey(fuse), fuse(concatBytes(utf8Encode('device-records-v1'), Uint8Array.of(1))), 'T(1) with its label');
      const t1 = fuse(concatBytes(utf8Encode('x'), Uint8Array.of(1)));
      const t2 = fuse(concatBytes(t1, utf8Encode('x'), Uint8Array.of(2)));
      deepEqual(hkdfExpandWithHmac(fuse, utf8Encode('x'), 40), concatBytes(t1, t2.subarray(0, 8)), 'T(1) || T(2), cut to 40');
      equal(hkdfExpandWithHmac(fuse, utf8Encode('x'), 0).length, 0, 'length 0');
      equal(hkdfExpandWithHmac(fuse, utf8Encode('x'), 32).length, 32, 'length 32');
      equal(hkdfExpandWithHmac(fuse, utf8Encode('x'), 8160).length, 8160, 'length 255 * 32');
      for (const n of [-1, 8161, 1.5]) await rejects(async () => hkdfExpandWithHmac(fuse, utf8Encode('x'), n), /HKDF-Expand length must be 0\.\.8160/, `length ${n}`);
    },
  },
  {
    name: 'the SoftAP password takes a BSSID as 6 bytes or as text with ":" or "-" (either case), and refuses anything else',
    async run() {
      const p = softApPassword(hexDecode('a1b2c3d4e5f6'));
      equal(p, 'A6B5C4D3E2F1', 'spec 5.6');
      for (const text of ['A1:B2:C3:D4:E5:F6', 'a1-b2-c3-d4-e5-f6', 'a1:B2:c3:D4:e5:F6']) equal(softApPassword(text), p, text);
      for (const bad of ['A1:B2:C3:D4:E5', 'A1:B2-C3:D4:E5:F6', 'A1B2C3D4E5F6', ' A1:B2:C3:D4:E5:F6', 'A1:B2:C3:D4:E5:F6 ', 'G1:B2:C3:D4:E5:F6']) {
        await rejects(async () => softApPassword(bad), /BSSID must look like/, JSON.stringify(bad));
      }
      for (const n of [5, 7]) await rejects(async () => softApPassword(new Uint8Array(n)), /BSSID must be 6 bytes/, `${n} bytes`);
      ok(true, 'done');
    },
  },
];
