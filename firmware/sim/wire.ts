// The frames between the firmware in XS and its host process, both directions: UTF-8 JSON, a newline
// (0x0A, which JSON.stringify never emits raw), then an optional binary payload (file and body
// chunks travel as bytes, not Base64). Portable: used inside XS and by the Node host.
import { utf8Decode, utf8Encode } from '../src/core/bytes.ts';

export interface Frame {
  json: unknown;
  payload: Uint8Array;
}

export function encodeFrame(json: unknown, payload?: Uint8Array): Uint8Array {
  const head = utf8Encode(JSON.stringify(json));
  const out = new Uint8Array(head.length + 1 + (payload?.length ?? 0));
  out.set(head, 0);
  out[head.length] = 0x0a;
  if (payload) out.set(payload, head.length + 1);
  return out;
}

export function decodeFrame(bytes: Uint8Array): Frame {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0) return { json: JSON.parse(utf8Decode(bytes)), payload: new Uint8Array(0) };
  return { json: JSON.parse(utf8Decode(bytes.subarray(0, nl))), payload: bytes.subarray(nl + 1) };
}

/** The ArrayBuffer of exactly these bytes (what the worker's issueCommand wants). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return (bytes.buffer as ArrayBuffer).slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}
