// Byte helpers for the portable core (DESIGN.md section 2): XS may lack the WHATWG text codecs and
// the browser Base64 globals, and the core may not use Node's byte buffers, so UTF-8, hex and Base64
// are done here by hand. Decoders are strict and throw: every input comes from the network or from
// flash, and a lenient decoder would turn a corrupt record or a bad header into silently different
// bytes.

const HEX_DIGITS = '0123456789abcdef';
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUES: ReadonlyMap<string, number> = new Map(
  Array.from(BASE64_ALPHABET, (char, value) => [char, value] as const),
);
/**
 * Code units per String.fromCharCode call. Small on purpose: the batch is a typed array (2 bytes a
 * unit), where a plain array would cost a whole slot per unit in XS's chunk heap; and `apply` puts
 * every unit on the JavaScript stack as an argument, a slot each, on a stack of 512 slots
 * (manifest.json creation.stack). At 256 a decode deep in a request overflowed it (an XS abort, the
 * board restarts); 64 keeps the decode's share of the stack small (docs/moddable-emulation.md).
 */
const DECODE_BATCH_UNITS = 64;

/** The code point at `i` of `text`, with lone surrogates as U+FFFD; `width` is 1 or 2 code units. */
function codePointAt(text: string, i: number): { codePoint: number; width: number } {
  const unit = text.charCodeAt(i);
  if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return { codePoint: 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00), width: 2 };
  }
  return { codePoint: unit >= 0xd800 && unit <= 0xdfff ? 0xfffd : unit, width: 1 };
}

/**
 * UTF-8 of a string. Lone surrogates become U+FFFD, as the WHATWG encoder and Node do. Two passes
 * (length, then bytes) so that nothing but the result is allocated: a board's heap is small.
 */
export function utf8Encode(text: string): Uint8Array {
  let length = 0;
  for (let i = 0; i < text.length; ) {
    const { codePoint, width } = codePointAt(text, i);
    length += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
    i += width;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (let i = 0; i < text.length; ) {
    const { codePoint, width } = codePointAt(text, i);
    i += width;
    if (codePoint < 0x80) out[at++] = codePoint;
    else if (codePoint < 0x800) {
      out[at++] = 0xc0 | (codePoint >> 6);
      out[at++] = 0x80 | (codePoint & 0x3f);
    } else if (codePoint < 0x10000) {
      out[at++] = 0xe0 | (codePoint >> 12);
      out[at++] = 0x80 | ((codePoint >> 6) & 0x3f);
      out[at++] = 0x80 | (codePoint & 0x3f);
    } else {
      out[at++] = 0xf0 | (codePoint >> 18);
      out[at++] = 0x80 | ((codePoint >> 12) & 0x3f);
      out[at++] = 0x80 | ((codePoint >> 6) & 0x3f);
      out[at++] = 0x80 | (codePoint & 0x3f);
    }
  }
  return out;
}

/**
 * Strict UTF-8 decoding (RFC 3629 section 4): throws on truncated sequences, stray continuation
 * bytes, overlong forms, surrogates and code points above U+10FFFF. A BOM is kept, not stripped.
 */
export function utf8Decode(bytes: Uint8Array): string {
  const parts: string[] = [];
  const units = new Uint16Array(DECODE_BATCH_UNITS + 1);
  let count = 0;
  const flush = () => {
    parts.push(String.fromCharCode.apply(null, units.subarray(0, count) as unknown as number[]));
    count = 0;
  };
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    // Sequence length, payload bits of the lead byte, and the smallest code point that needs
    // this length (anything below it is an overlong form).
    let length = 1;
    let codePoint = lead;
    let min = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2; codePoint = lead & 0x1f; min = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3; codePoint = lead & 0x0f; min = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4; codePoint = lead & 0x07; min = 0x10000;
    } else if (lead >= 0x80) {
      throw new Error(`invalid UTF-8: byte 0x${lead.toString(16)} at offset ${i}`);
    }
    if (i + length > bytes.length) throw new Error(`invalid UTF-8: truncated sequence at offset ${i}`);
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k]!;
      if ((next & 0xc0) !== 0x80) throw new Error(`invalid UTF-8: bad continuation at offset ${i + k}`);
      codePoint = (codePoint << 6) | (next & 0x3f);
    }
    if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) {
      throw new Error(`invalid UTF-8: bad code point at offset ${i}`);
    }
    if (codePoint < 0x10000) units[count++] = codePoint;
    else {
      units[count++] = 0xd800 + ((codePoint - 0x10000) >> 10);
      units[count++] = 0xdc00 + ((codePoint - 0x10000) & 0x3ff);
    }
    if (count >= DECODE_BATCH_UNITS) flush();
    i += length;
  }
  flush();
  return parts.length === 1 ? parts[0]! : parts.join('');
}

/** ISO-8859-1: each byte one code unit; never throws (RFC 9110 section 5.5: an HTTP field's obs-text). */
export function latin1Decode(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += DECODE_BATCH_UNITS) {
    parts.push(String.fromCharCode.apply(null, bytes.subarray(at, at + DECODE_BATCH_UNITS) as unknown as number[]));
  }
  return parts.length === 1 ? parts[0]! : parts.join('');
}

/** Lowercase hex. */
export function hexEncode(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 0x0f]!;
  return out;
}

/** Hex to bytes; either case is accepted, anything else (odd length, other characters) throws. */
export function hexDecode(hex: string): Uint8Array {
  if (hex.length % 2 !== 0) throw new Error(`invalid hex: odd length ${hex.length}`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const high = HEX_DIGITS.indexOf(hex.charAt(2 * i).toLowerCase());
    const low = HEX_DIGITS.indexOf(hex.charAt(2 * i + 1).toLowerCase());
    if (high < 0 || low < 0) throw new Error(`invalid hex: bad character near offset ${2 * i}`);
    out[i] = (high << 4) | low;
  }
  return out;
}

/** Standard Base64 (RFC 4648 section 4), padded. */
export function base64Encode(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const remaining = bytes.length - i;
    const triple = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64_ALPHABET[(triple >> 18) & 0x3f]! + BASE64_ALPHABET[(triple >> 12) & 0x3f]!;
    out += remaining > 1 ? BASE64_ALPHABET[(triple >> 6) & 0x3f]! : '=';
    out += remaining > 2 ? BASE64_ALPHABET[triple & 0x3f]! : '=';
  }
  return out;
}

/**
 * Strict standard Base64: length a multiple of 4, only the standard alphabet, at most two '='
 * and only at the end, no whitespace, and zero unused bits (RFC 4648 section 3.5), so every
 * byte string has exactly one accepted encoding. Spec section 7: invalid Base64 is a 400.
 */
export function base64Decode(text: string): Uint8Array {
  if (text.length % 4 !== 0) throw new Error(`invalid Base64: length ${text.length} is not a multiple of 4`);
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - padding);
  let written = 0;
  for (let i = 0; i < text.length; i += 4) {
    const lastQuad = i + 4 === text.length;
    let quad = 0;
    for (let k = 0; k < 4; k++) {
      const char = text.charAt(i + k);
      const value = char === '=' && lastQuad && k >= 4 - padding ? 0 : BASE64_VALUES.get(char);
      if (value === undefined) throw new Error(`invalid Base64: bad character at offset ${i + k}`);
      quad = (quad << 6) | value;
    }
    if (lastQuad && padding > 0 && (quad & (padding === 2 ? 0xffff : 0xff)) !== 0) {
      throw new Error('invalid Base64: non-zero bits after the last byte');
    }
    for (let shift = 16; shift >= 0 && written < out.length; shift -= 8) out[written++] = (quad >> shift) & 0xff;
  }
  return out;
}

export function concatBytes(...arrays: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const array of arrays) length += array.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const array of arrays) {
    out.set(array, offset);
    offset += array.length;
  }
  return out;
}

/** Plain equality, for public data. Use constantTimeEqual for tags, tokens and MACs. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Equality whose running time does not depend on where the contents differ, so a tag or token
 * cannot be guessed byte by byte from response times. The length is not treated as secret.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}
