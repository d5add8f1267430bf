// The known-answer vectors of ../shared/vectors/device-crypto.json (beside the project, as in CI).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest shared/vectors/device-crypto.json above this folder: beside the project, or further
 * up when the tests run from a copy inside it (the mutation-testing sandbox, .stryker-tmp/sandbox-…/).
 */
function findVectors(): string {
  const beside = fileURLToPath(new URL('../../../shared/vectors/device-crypto.json', import.meta.url));
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'shared', 'vectors', 'device-crypto.json');
    if (existsSync(candidate)) return candidate;
  }
  return beside;
}

export const VECTORS_PATH = findVectors();

export interface DeviceCryptoVectors {
  softap_password: { bssid: string; password: string }[];
  backup_key: { fuse_key_hex: string; info: string; key_hex: string };
  ffce_blob: { key_hex: string; iv_hex: string; aad: string; plaintext_utf8: string; blob_hex: string; blob_length: number; etag_sha256_hex: string };
  device_identity_key: { fuse_key_hex: string; info: string; okm_hex: string; private_key_hex: string; public_key_uncompressed_hex: string };
  device_signature: {
    private_key_hex: string;
    public_key_spki_pem: string;
    public_key_uncompressed_hex: string;
    nonce_base64: string;
    timestamp: string;
    signature_der_base64: string;
  };
}

export const vectors: DeviceCryptoVectors = JSON.parse(readFileSync(VECTORS_PATH, 'utf8'));
