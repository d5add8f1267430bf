// The Reed–Solomon code of the ESP32-S3's eFuse blocks 1 to 10: 32 data bytes and 12 check bytes,
// RS(44, 32) over GF(2^8) with the polynomial x^8+x^4+x^3+x^2+1 (0x11d), generator 2 and first
// root 2^0 — the code espefuse computes with `reedsolo.RSCodec(12)` (esptool,
// espefuse/efuse/esp32s3/fields.py, EfuseBlock.apply_coding_scheme) and writes to
// EFUSE_PGM_CHECK_VALUE0..2 after the data in EFUSE_PGM_DATA0..7 (the block's bytes in register
// order: byte 0 is the low byte of word 0). The chip burns both and decodes them on every read.
// Written here from the definition of the code, not from either tool's source.

const PRIMITIVE = 0x11d;
export const EFUSE_RS_CHECK_BYTES = 12;
export const EFUSE_BLOCK_BYTES = 32;

const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = x;
    LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= PRIMITIVE;
  }
  for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255]!;
}

export function gfMul(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : EXP[LOG[a]! + LOG[b]!]!;
}

/** 2^i in the field. */
export function gfPow2(i: number): number {
  return EXP[i % 255]!;
}

/** g(x) = (x − 2^0)(x − 2^1)…(x − 2^11), highest coefficient first (g[0] = 1). */
const GENERATOR = (() => {
  let g = [1];
  for (let i = 0; i < EFUSE_RS_CHECK_BYTES; i++) {
    const next = new Array<number>(g.length + 1).fill(0);
    g.forEach((c, j) => {
      next[j]! ^= c;
      next[j + 1]! ^= gfMul(c, gfPow2(i));
    });
    g = next;
  }
  return Uint8Array.from(g);
})();

/** The 12 check bytes of a block's 32 data bytes: the remainder of data·x^12 divided by g(x). */
export function efuseRsCheck(data: Uint8Array): Uint8Array {
  if (data.length !== EFUSE_BLOCK_BYTES) throw new RangeError(`an eFuse block is ${EFUSE_BLOCK_BYTES} bytes, not ${data.length}`);
  const rem = new Uint8Array(EFUSE_RS_CHECK_BYTES);
  for (const byte of data) {
    const factor = byte ^ rem[0]!;
    rem.copyWithin(0, 1);
    rem[EFUSE_RS_CHECK_BYTES - 1] = 0;
    for (let j = 0; j < EFUSE_RS_CHECK_BYTES; j++) rem[j]! ^= gfMul(GENERATOR[j + 1]!, factor);
  }
  return rem;
}

/** Words as the registers hold them (little-endian bytes). */
export function wordsToBytes(words: readonly number[]): Uint8Array {
  const out = new Uint8Array(words.length * 4);
  const view = new DataView(out.buffer);
  words.forEach((w, i) => view.setUint32(4 * i, w >>> 0, true));
  return out;
}

export function bytesToWords(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.length >>> 2 }, (_, i) => view.getUint32(4 * i, true));
}
