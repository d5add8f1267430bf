// ECDSA signature encoding for the PSA crypto HAL. PSA returns r || s (32 + 32 bytes: PSA crypto API
// 1.1, psa_sign_message); DESIGN.md section 3 wants DER (SEC 1 section C.8 / RFC 3279:
// SEQUENCE { INTEGER r, INTEGER s }). s is normalized to the lower half of the group, as the portable
// fallback (@noble, lowS) does, so both platforms give the same bytes for a key and a message
// (RFC 6979 makes k, hence r, deterministic; s and n - s both verify).

/** The P-256 group order n (FIPS 186-5 / SEC 2 secp256r1). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function toBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return value;
}

function toBytes32(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--, value >>= 8n) out[i] = Number(value & 0xffn);
  return out;
}

/** A DER INTEGER: no leading zero bytes, but one when the top bit is set (it would read as negative). */
function derInteger(unsigned: Uint8Array): Uint8Array {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  const pad = unsigned[start]! >= 0x80 ? 1 : 0;
  const out = new Uint8Array(2 + pad + unsigned.length - start);
  out[0] = 0x02;
  out[1] = out.length - 2;
  out.set(unsigned.subarray(start), 2 + pad);
  return out;
}

/** DER of a raw P-256 signature r || s, with s made low (s <= n/2). */
export function p256SignatureDer(raw: Uint8Array): Uint8Array {
  if (raw.length !== 64) throw new Error(`a raw P-256 signature is 64 bytes, got ${raw.length}`);
  let s = toBigInt(raw.subarray(32));
  if (s > P256_ORDER >> 1n) s = P256_ORDER - s;
  const r = derInteger(raw.subarray(0, 32));
  const sInt = derInteger(toBytes32(s));
  const out = new Uint8Array(2 + r.length + sInt.length);
  out[0] = 0x30;
  out[1] = r.length + sInt.length; // at most 70: the short length form
  out.set(r, 2);
  out.set(sInt, 2 + r.length);
  return out;
}
