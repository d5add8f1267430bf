// The PSA crypto HAL returns ECDSA signatures raw (r || s); hal/ecdsa-der.ts makes them DER with a
// low s, so that a board's signature is byte for byte the portable fallback's (@noble, RFC 6979).
// Checked here with the device-signature vector and random keys, against @noble/curves.
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { base64Decode, concatBytes, hexDecode, utf8Encode } from '../../firmware/src/core/bytes.ts';
import { p256SignatureDer } from '../../firmware/src/platform/moddable/hal/ecdsa-der.ts';
import { vectors } from '../helpers/vectors.ts';

const N = p256.Point.CURVE().n;

function raw(r: bigint, s: bigint): Uint8Array {
  return hexDecode(r.toString(16).padStart(64, '0') + s.toString(16).padStart(64, '0'));
}

describe('DER of a raw P-256 signature', () => {
  it('is the fallback’s signature, whichever s PSA returned', () => {
    const v = vectors.device_signature;
    const key = hexDecode(v.private_key_hex);
    const message = concatBytes(base64Decode(v.nonce_base64), utf8Encode(v.timestamp));
    const compact = p256.sign(message, key, { format: 'compact' });
    const sig = p256.Signature.fromBytes(compact, 'compact');
    const der = p256.sign(message, key, { format: 'der' });
    expect(p256SignatureDer(raw(sig.r, sig.s))).toEqual(der);
    expect(p256SignatureDer(raw(sig.r, N - sig.s))).toEqual(der); // a high s is made low
    expect(p256.verify(p256SignatureDer(raw(sig.r, sig.s)), sha256(message), hexDecode(v.public_key_uncompressed_hex), { prehash: false, format: 'der' })).toBe(true);
  });

  it('encodes short and high-bit integers as DER wants (no leading zeros; 0x00 before a set top bit)', () => {
    for (let i = 0; i < 200; i++) {
      const key = p256.utils.randomSecretKey();
      const message = utf8Encode(`message ${i}`);
      const sig = p256.Signature.fromBytes(p256.sign(message, key, { format: 'compact' }), 'compact');
      expect(p256SignatureDer(raw(sig.r, sig.s))).toEqual(p256.sign(message, key, { format: 'der' }));
    }
    const small = p256SignatureDer(raw(1n, 0x80n));
    expect([...small]).toEqual([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0x80]);
    expect(() => p256SignatureDer(new Uint8Array(63))).toThrow(/64 bytes/);
  });
});
