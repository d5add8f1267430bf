// Byte views for Moddable APIs. The SDK's natives read their buffer arguments with
// xsmcGetBufferReadable (xs/includes/xsmc.h), which accepts an ArrayBuffer, a typed array or a
// DataView as it is, so a chunk is passed without copying it; @moddable/typings declares only
// ArrayBuffer for several of them (file `write`, socket `write`), hence this one cast, kept here.
import { normalizeMac } from '../../../core/ids.ts';
import { hexDecode } from '../../../core/bytes.ts';

export function asBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes as unknown as ArrayBuffer;
}

/** "AA:BB:CC:DD:EE:FF" (the core's MAC spelling, core/ids.ts) from 6 bytes. */
export function macText(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (b.length !== 6) throw new Error(`a MAC is 6 bytes, got ${b.length}`);
  return Array.from(b, (x) => (x < 16 ? '0' : '') + x.toString(16).toUpperCase()).join(':');
}

/** 6 bytes from any MAC spelling the core accepts; throws on anything else. */
export function macBytes(text: string): Uint8Array {
  const mac = normalizeMac(text);
  if (mac === null) throw new Error(`not a MAC address: ${JSON.stringify(text)}`);
  return hexDecode(mac.replace(/:/g, ''));
}

/** The associated stations in a native list: 6 bytes each. */
export function macList(bytes: ArrayBuffer): string[] {
  const all = new Uint8Array(bytes);
  const macs: string[] = [];
  for (let at = 0; at + 6 <= all.length; at += 6) macs.push(macText(all.subarray(at, at + 6)));
  return macs;
}
