// Device signature checks (spec 5.1, DESIGN.md section 3): X-Device-UUID, X-Device-Nonce (Base64 of 32
// bytes), X-Device-Timestamp (ISO 8601 UTC, `Z`), X-Device-Signature (Base64 DER ECDSA P-256 over
// SHA-256(nonce bytes || UTF-8 timestamp)). Header problems are 400, a UUID that is not the path's is
// 403, and an unknown device, a bad signature, a stale timestamp or a replayed nonce are 401.
// The header checks are those of their one declaration, DeviceSignatureHeaders (cloud/schema/api.ts),
// run by the schema validator; this file only orders the problems and decodes what passed.
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, type ErrorCode } from '../errors.ts';
import { Base64, DeviceSignatureHeaders, IsoUtcTimestamp, NONCE_BYTES } from '../schema/api.ts';
import { checker, describeProblem, type Problem } from '../schema/validator.ts';
import type { CloudStore } from '../store/types.ts';

export { NONCE_BYTES };

const checkHeaders = checker(DeviceSignatureHeaders);
const checkBase64 = checker(Base64);
const checkTimestamp = checker(IsoUtcTimestamp);
type HeaderName = keyof typeof DeviceSignatureHeaders.properties;
/** First each header's presence and single value, in the declaration's order (UUID, nonce, timestamp, signature)… */
const HEADER_NAMES = Object.keys(DeviceSignatureHeaders.properties) as HeaderName[];
/** …then their values, in this order (as before the schema); within a header, its checks in declared order. */
const VALUE_ORDER: readonly string[] = ['x-device-nonce', 'x-device-timestamp', 'x-device-signature', 'x-device-uuid'] satisfies HeaderName[];

function rank(p: Problem): number {
  return p.keyword === 'required' || p.keyword === 'type' ? HEADER_NAMES.indexOf(p.field as HeaderName) : HEADER_NAMES.length + VALUE_ORDER.indexOf(p.field);
}

/** The refusal for the first problem: the code the failing schema names; the message names the header and the value. */
function headerRefusal(problems: Problem[]): ApiError {
  const p = problems.sort((a, b) => rank(a) - rank(b))[0]!;
  const header = p.field;
  if (p.keyword === 'required') return new ApiError('missing_header', { header }, `The ${header} header is required`);
  const code = (p.code ?? 'invalid_header') as ErrorCode;
  if (header === 'x-device-nonce' && code === 'invalid_header' && typeof p.value === 'string') {
    const bytes = Buffer.byteLength(p.value, 'base64');
    return new ApiError(code, { header, bytes }, `${describeProblem(p)} (${bytes} bytes)`);
  }
  return new ApiError(code, { header }, describeProblem(p));
}

export interface SignedHeaders {
  uuid: string;
  nonce: Buffer;
  nonceBase64: string;
  timestamp: string;
  timestampMs: number;
  signature: Buffer;
}

/** A header as the schema sees it: trimmed, blank is absent; a repeated header (an array) stays one. */
function headerValue(v: string | string[] | undefined): string | string[] | undefined {
  return typeof v === 'string' ? v.trim() || undefined : v;
}

/** Strict Base64 (standard alphabet, padded, the schema's Base64); anything else is a 400 invalid_base64. */
export function decodeBase64Strict(value: string, name: string): Buffer {
  if (!checkBase64(value)) throw new ApiError('invalid_base64', { header: name }, describeProblem({ ...checkBase64.problems()[0]!, field: name }));
  return Buffer.from(value, 'base64');
}

/** ISO 8601 UTC ending in Z, with or without fractional seconds, a real calendar day (the schema's IsoUtcTimestamp); epoch ms or null. */
export function parseIsoUtc(value: string): number | null {
  return checkTimestamp(value) ? Date.parse(value) : null;
}

/** Validates the four signature headers (400s) and the path match (403). No I/O. */
export function parseSignedHeaders(headers: IncomingHttpHeaders, pathUuid: string): SignedHeaders {
  const h: Record<string, string | string[] | undefined> = {};
  for (const name of HEADER_NAMES) h[name] = headerValue(headers[name]);
  if (!checkHeaders(h)) throw headerRefusal(checkHeaders.problems());
  const uuid = h['x-device-uuid'];
  if (uuid !== pathUuid) throw new ApiError('device_uuid_mismatch');
  const nonce = Buffer.from(h['x-device-nonce'], 'base64');
  const timestamp = h['x-device-timestamp'];
  const signature = Buffer.from(h['x-device-signature'], 'base64');
  return { uuid, nonce, nonceBase64: nonce.toString('base64'), timestamp, timestampMs: Date.parse(timestamp), signature };
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
  const parsed = parseP256Spki(text);
  if (!('key' in parsed)) return parsed;
  // Stored in the canonical form, so that nothing but the key itself is kept.
  return { key: parsed.key, pem: parsed.key.export({ type: 'spki', format: 'pem' }).toString() };
}

/**
 * The first 26 bytes of every ECDSA P-256 SPKI public key in DER (RFC 5480: SEQUENCE, the algorithm
 * id-ecPublicKey with the curve prime256v1, a BIT STRING of 66 bytes), before the 65-byte point.
 */
const P256_SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

/**
 * An enrolled key for verification: the same checks as enrollment (one PEM PUBLIC KEY block, SPKI,
 * public, EC on P-256) but without re-exporting the canonical PEM, which only enrollment stores
 * (profiled: the export was a third of the key's cost on a device's first request). The canonical
 * form enrollment stores is read by its fixed P-256 prefix and its point given to OpenSSL as a JWK
 * (which refuses a point off the curve): ~70 µs instead of ~140 µs for the DER decoder and the key's
 * details, on every worker's first signed request of each device (docs/fleet-scale.md). Any other
 * form takes the full parse.
 */
export function parseEnrolledKey(pem: string): KeyObject | null {
  const text = pem.trim() + '\n';
  const m = SPKI_PEM.exec(text);
  if (m) {
    const der = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
    if (der.length === P256_SPKI_PREFIX.length + 65 && der[P256_SPKI_PREFIX.length] === 0x04 && der.subarray(0, P256_SPKI_PREFIX.length).equals(P256_SPKI_PREFIX)) {
      const at = P256_SPKI_PREFIX.length + 1;
      try {
        return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: der.subarray(at, at + 32).toString('base64url'), y: der.subarray(at + 32, at + 64).toString('base64url') }, format: 'jwk' });
      } catch {
        return null;
      }
    }
  }
  const parsed = parseP256Spki(text);
  return 'key' in parsed ? parsed.key : null;
}

/** One PEM PUBLIC KEY block holding an SPKI ECDSA P-256 public key (`text` trimmed, ending in a newline). */
function parseP256Spki(text: string): { key: KeyObject } | PublicKeyRefusal {
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
  return { key };
}

/** Parsed keys kept per device (a KeyObject is ~1 KB): the oldest is dropped past this. */
const KEY_CACHE_ENTRIES = 20_000;

/**
 * The parsed keys of this process, by device, with the PEM they were parsed from: a key is used only
 * while the store still holds that PEM, so one cache serves every authenticator of the process.
 */
const deviceKeys = new Map<string, { pem: string; key: KeyObject }>();

function cacheDeviceKey(uuid: string, pem: string, key: KeyObject): void {
  deviceKeys.delete(uuid);
  if (deviceKeys.size >= KEY_CACHE_ENTRIES) deviceKeys.delete(deviceKeys.keys().next().value!);
  deviceKeys.set(uuid, { pem, key });
}

/**
 * Enrollment hands over the key it has just parsed and stored (`pem` as stored, the canonical
 * export of checkDevicePublicKey): a device's first signed request then parses nothing
 * (createPublicKey was 9–11 % of a boot storm's profile, docs/fleet-scale.md).
 */
export function rememberEnrolledKey(uuid: string, pem: string, key: KeyObject): void {
  cacheDeviceKey(uuid, pem, key);
}

/** The parsed key this process holds for a device, with the PEM it stands for (tests, diagnostics). */
export function cachedDeviceKey(uuid: string): { pem: string; key: KeyObject } | undefined {
  return deviceKeys.get(uuid);
}

/** Authenticates a device request against the store: 401 for every failure, with a distinct code. */
export class DeviceAuthenticator {
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
    const cached = deviceKeys.get(uuid);
    if (cached && cached.pem === pem) return cached.key;
    const key = parseEnrolledKey(pem);
    if (!key) throw new ApiError('invalid_signature');
    cacheDeviceKey(uuid, pem, key);
    return key;
  }
}
