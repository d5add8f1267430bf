// Little-endian fields and fixed-size C strings, as ESP-IDF's structures lay them out (every
// multi-byte field of the image header, the partition table and otadata is little-endian). Pure
// TypeScript on Uint8Array, no Node and no text codecs: the OTA client in the portable core reads
// app descriptors with these too.

export function u16(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

export function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

export function putU16(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
}

export function putU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

/**
 * A `char[length]` field: up to the first NUL. Only ASCII is expected (versions, names, dates);
 * any other byte reads as U+FFFD rather than being guessed at.
 */
export function cString(bytes: Uint8Array, at: number, length: number): string {
  let out = '';
  for (let i = at; i < at + length; i++) {
    const b = bytes[i]!;
    if (b === 0) break;
    out += b < 0x80 ? String.fromCharCode(b) : '\ufffd';
  }
  return out;
}

/** Writes `text` (ASCII) into a `char[length]` field, NUL-padded; refuses what does not fit with its NUL. */
export function putCString(bytes: Uint8Array, at: number, length: number, text: string, field: string): void {
  if (text.length >= length) throw new RangeError(`${field} is ${text.length} characters; it must be shorter than ${length}: ${JSON.stringify(text)}`);
  for (let i = 0; i < length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    if (c > 0x7e || (c < 0x20 && c !== 0)) throw new RangeError(`${field} must be printable ASCII: ${JSON.stringify(text)}`);
    bytes[at + i] = c;
  }
}

export function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

export function hex32(value: number, digits = 8): string {
  return `0x${(value >>> 0).toString(16).padStart(digits, '0')}`;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
