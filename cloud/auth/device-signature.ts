// Device signature checks (spec 5.1, DESIGN.md section 3): X-Device-UUID, X-Device-Nonce (Base64 of 32
// bytes), X-Device-Timestamp (ISO 8601 UTC, `Z`), X-Device-Signature (Base64 DER ECDSA P-256 over
// SHA-256(nonce bytes || UTF-8 timestamp)). Header problems are 400, a UUID that is not the path's is
// 403, and an unknown device, a bad signature, a stale timestamp or a replayed nonce are 401.
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../errors.ts';
import type { CloudStore } from '../store/types.ts';

export const NONCE_BYTES = 32;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;
export const DEVICE_UUID = /^[A-Za-z0-9._:-]{1,64}$/;

export interface SignedHeaders {
  uuid: string;
  nonce: Buffer;
  nonceBase64: string;
  timestamp: string;
  timestampMs: number;
  signature: Buffer;
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  if (v === undefined || (typeof v === 'string' && v.trim() === '')) {
    throw new ApiError('missing_header', { header: name }, `The ${name} header is required`);
  }
  if (Array.isArray(v)) throw new ApiError('invalid_header', { header: name }, `The ${name} header must appear once`);
  return v.trim();
}

/** Strict Base64 (standard alphabet, padded); anything else is a 400. */
export function decodeBase64Strict(value: string, name: string): Buffer {
  if (!BASE64.test(value)) throw new ApiError('invalid_base64', { header: name }, `The ${name} header is not valid Base64`);
  return Buffer.from(value, 'base64');
}

/** ISO 8601 UTC ending in Z, with or without fractional seconds; returns epoch ms or null. */
export function parseIsoUtc(value: string): number | null {
  const m = ISO_UTC.exec(value);
  if (!m) return null;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return null;
  // Reject calendar overflow such as 2026-02-31, which Date.parse would roll over.
  const d = new Date(ms);
  if (d.getUTCFullYear() !== Number(m[1]) || d.getUTCMonth() + 1 !== Number(m[2]) || d.getUTCDate() !== Number(m[3])) {
    return null;
  }
  return ms;
}

/** Validates the four signature headers (400s) and the path match (403). No I/O. */
export function parseSignedHeaders(headers: IncomingHttpHeaders, pathUuid: string): SignedHeaders {
  const uuid = header(headers, 'x-device-uuid');
  const nonceBase64 = header(headers, 'x-device-nonce');
  const timestamp = header(headers, 'x-device-timestamp');
  const signatureBase64 = header(headers, 'x-device-signature');
  const nonce = decodeBase64Strict(nonceBase64, 'x-device-nonce');
  if (nonce.length !== NONCE_BYTES) {
    throw new ApiError(
      'invalid_header',
      { header: 'x-device-nonce', bytes: nonce.length },
      `The x-device-nonce header must decode to ${NONCE_BYTES} bytes, not ${nonce.length}`,
    );
  }
  const timestampMs = parseIsoUtc(timestamp);
  if (timestampMs === null) {
    throw new ApiError(
      'invalid_header',
      { header: 'x-device-timestamp' },
      'The x-device-timestamp header must be an ISO 8601 UTC timestamp such as 2026-11-21T12:00:00Z',
    );
  }
  const signature = decodeBase64Strict(signatureBase64, 'x-device-signature');
  if (signature.length < 8 || signature.length > 72) {
    throw new ApiError('invalid_header', { header: 'x-device-signature' }, 'The x-device-signature header is not a DER ECDSA P-256 signature');
  }
  if (!DEVICE_UUID.test(uuid)) throw new ApiError('invalid_header', { header: 'x-device-uuid' }, 'The x-device-uuid header is not a valid device UUID');
  if (uuid !== pathUuid) throw new ApiError('device_uuid_mismatch');
  return { uuid, nonce, nonceBase64: nonce.toString('base64'), timestamp, timestampMs, signature };
}

/** The message a device signs: the 32 nonce bytes followed by the UTF-8 timestamp header. */
export function signedMessage(nonce: Buffer, timestamp: string): Buffer {
  return Buffer.concat([nonce, Buffer.from(timestamp, 'utf8')]);
}

export function verifyDeviceSignature(publicKey: KeyObject, h: Pick<SignedHeaders, 'nonce' | 'timestamp' | 'signature'>): boolean {
  try {
    return cryptoVerify('sha256', signedMessage(h.nonce, h.timestamp), { key: publicKey, dsaEncoding: 'der' }, h.signature);
  } catch {
    return false;
  }
}

/**
 * The same check, run on libuv's thread pool (node's crypto.verify with a callback) instead of the
 * event loop: an ECDSA P-256 verify is ~100 µs of CPU, the largest single cost of an upload in the
 * profile (docs/fleet-scale.md); on the pool it no longer holds up every other request.
 */
export function verifyDeviceSignatureAsync(publicKey: KeyObject, h: Pick<SignedHeaders, 'nonce' | 'timestamp' | 'signature'>): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      cryptoVerify('sha256', signedMessage(h.nonce, h.timestamp), { key: publicKey, dsaEncoding: 'der' }, h.signature, (err, ok) => resolve(!err && ok));
    } catch {
      resolve(false);
    }
  });
}

const SPKI_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n((?:[A-Za-z0-9+/=]{1,76}\r?\n)+)-----END PUBLIC KEY-----\r?\n?$/;

export type PublicKeyRefusal =
  | { reason: 'not_spki_pem'; message: string }
  | { reason: 'private_key'; message: string }
  | { reason: 'unsupported_key'; message: string; key_type: string | undefined; curve?: string | undefined };

/**
 * Parses a device key for enrollment: exactly one PEM `PUBLIC KEY` block (SPKI), ECDSA on P-256.
 * Anything else is refused with a reason, never echoed: node's createPublicKey would also accept a
 * PKCS#8 or SEC1 private key (and derive its public half) or a certificate, so the PEM label and the
 * DER type are checked before the key is parsed.
 */
export function checkDevicePublicKey(pem: string): { key: KeyObject; pem: string } | PublicKeyRefusal {
  const text = pem.trim() + '\n';
  if (/-----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY-----/.test(text)) {
    return { reason: 'private_key', message: 'public_key is a private key; send only the public key, PEM SPKI (-----BEGIN PUBLIC KEY-----)' };
  }
  const m = SPKI_PEM.exec(text);
  if (!m) return { reason: 'not_spki_pem', message: 'public_key must be one PEM block -----BEGIN PUBLIC KEY----- (SPKI)' };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  } catch {
    return { reason: 'not_spki_pem', message: 'public_key is not a valid SPKI public key' };
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.type !== 'public' || key.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') {
    return {
      reason: 'unsupported_key',
      message: 'public_key must be an ECDSA P-256 (prime256v1) key',
      key_type: key.asymmetricKeyType,
      ...(key.asymmetricKeyType === 'ec' ? { curve } : {}),
    };
  }
  // Stored in the canonical form, so that nothing but the key itself is kept.
  return { key, pem: key.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Parses an enrolled key; only ECDSA P-256 SPKI PEM is accepted. */
export function parseDevicePublicKey(pem: string): KeyObject | null {
  const checked = checkDevicePublicKey(pem);
  return 'key' in checked ? checked.key : null;
}

/**
 * An enrolled key for verification: the same checks as enrollment (one PEM PUBLIC KEY block, SPKI,
 * public, EC on P-256) but without re-exporting the canonical PEM, which only enrollment stores
 * (profiled: the export was a third of the key's cost on a device's first request).
 */
export function parseEnrolledKey(pem: string): KeyObject | null {
  const m = SPKI_PEM.exec(pem.trim() + '\n');
  if (!m) return null;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  } catch {
    return null;
  }
  if (key.type !== 'public' || key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return null;
  return key;
}

/** Parsed keys kept per device (a KeyObject is ~1 KB): the oldest is dropped past this. */
const KEY_CACHE_ENTRIES = 20_000;

/** Authenticates a device request against the store: 401 for every failure, with a distinct code. */
export class DeviceAuthenticator {
  private readonly keys = new Map<string, { pem: string; key: KeyObject }>();

  constructor(
    private readonly store: CloudStore,
    private readonly windowSeconds: number,
    private readonly now: () => number,
  ) {}

  async authenticate(h: SignedHeaders): Promise<void> {
    const device = await this.store.getDevice(h.uuid);
    if (!device) throw new ApiError('unknown_device');
    const nowMs = this.now();
    const windowMs = this.windowSeconds * 1000;
    if (Math.abs(nowMs - h.timestampMs) > windowMs) {
      throw new ApiError('timestamp_out_of_window', { window_seconds: this.windowSeconds });
    }
    if (!(await verifyDeviceSignatureAsync(this.keyFor(device.uuid, device.publicKeyPem), h))) throw new ApiError('invalid_signature');
    // Only a verified request consumes its nonce. It must stay refused while its timestamp could
    // still be accepted, i.e. until timestamp + window.
    const fresh = await this.store.recordNonce(h.uuid, h.nonceBase64, h.timestampMs + windowMs, nowMs);
    if (!fresh) throw new ApiError('nonce_replayed');
  }

  private keyFor(uuid: string, pem: string): KeyObject {
    const cached = this.keys.get(uuid);
    if (cached && cached.pem === pem) return cached.key;
    const key = parseEnrolledKey(pem);
    if (!key) throw new ApiError('invalid_signature');
    this.keys.delete(uuid);
    if (this.keys.size >= KEY_CACHE_ENTRIES) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(uuid, { pem, key });
    return key;
  }
}
