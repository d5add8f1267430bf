// The product's known-answer vectors for the device crypto, kept in the repository
// (test/vectors/device-crypto.json; where they come from: test/vectors/README.md). The one place that
// names the file: the Node tests and the portable cases (firmware/test-cases/, bundled for XS too)
// import them from here, so this module imports nothing of Node's.
import data from '../vectors/device-crypto.json' with { type: 'json' };

/** The vectors' file, from the repository's root. */
export const VECTORS_FILE = 'test/vectors/device-crypto.json';

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

export const vectors: DeviceCryptoVectors = data;
