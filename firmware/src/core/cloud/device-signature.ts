// The device signature of every request a board makes to the cloud about itself (DESIGN.md section 3):
// a fresh 32-byte nonce and the board's time, signed with its identity key (ECDSA P-256 over
// nonce || timestamp, DER, Base64). Backups and health reports carry the same four headers.
import type { Hal } from '../../hal/index.ts';
import { base64Encode, concatBytes, utf8Encode } from '../bytes.ts';

export function signatureHeaders(hal: Pick<Hal, 'crypto' | 'clock'>, identityKey: Uint8Array, uuid: string): Record<string, string> {
  const nonce = hal.crypto.randomBytes(32);
  const timestamp = new Date(hal.clock.now()).toISOString();
  const signature = hal.crypto.ecdsaP256Sign(identityKey, concatBytes(nonce, utf8Encode(timestamp)));
  return {
    'x-device-uuid': uuid,
    'x-device-nonce': base64Encode(nonce),
    'x-device-timestamp': timestamp,
    'x-device-signature': base64Encode(signature),
  };
}
