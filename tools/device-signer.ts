// The device side of the signature scheme (DESIGN.md section 3), for tools, tests and the bench: a
// fresh 32-byte nonce, an ISO 8601 UTC timestamp, and an ECDSA P-256 / SHA-256 DER signature over
// nonce || timestamp.
import { randomBytes, sign, type KeyObject } from 'node:crypto';

export interface DeviceSignatureHeaders {
  'x-device-uuid': string;
  'x-device-nonce': string;
  'x-device-timestamp': string;
  'x-device-signature': string;
}

export function signDeviceRequest(
  privateKey: KeyObject,
  uuid: string,
  opts: { nonce?: Buffer; timestamp?: string; nowMs?: number } = {},
): DeviceSignatureHeaders {
  const nonce = opts.nonce ?? randomBytes(32);
  const timestamp = opts.timestamp ?? new Date(opts.nowMs ?? Date.now()).toISOString();
  const signature = sign('sha256', Buffer.concat([nonce, Buffer.from(timestamp, 'utf8')]), { key: privateKey, dsaEncoding: 'der' });
  return {
    'x-device-uuid': uuid,
    'x-device-nonce': nonce.toString('base64'),
    'x-device-timestamp': timestamp,
    'x-device-signature': signature.toString('base64'),
  };
}
