// The device signature checks (spec 5.1, DESIGN.md section 3) called directly, with the product's
// known-answer vector: strict Base64, the ISO 8601 UTC timestamp form (no calendar roll-over, no
// expanded years), which header a refusal names, the signature check over nonce || timestamp, the
// enrollment key checks (one PEM PUBLIC KEY block and nothing around it, P-256 only), and a
// re-enrolled device whose old key no longer verifies.
import { describe, expect, it } from 'vitest';
import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { ApiError } from '../../cloud/errors.ts';
import {
  checkDevicePublicKey,
  decodeBase64Strict,
  DeviceAuthenticator,
  parseEnrolledKey,
  parseIsoUtc,
  parseSignedHeaders,
  signedMessage,
  verifyDeviceSignature,
  verifyDeviceSignatureAsync,
} from '../../cloud/auth/device-signature.ts';
import type { CloudStore, DeviceRecord } from '../../cloud/store/types.ts';
import { vectors } from '../helpers/vectors.ts';

const v = vectors.device_signature;
const headers = (o: Record<string, string> = {}) => ({
  'x-device-uuid': 'ctl-1',
  'x-device-nonce': v.nonce_base64,
  'x-device-timestamp': v.timestamp,
  'x-device-signature': v.signature_der_base64,
  ...o,
});

function refusal(fn: () => unknown): { code: string; details: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return { code: (err as ApiError).code, details: (err as ApiError).details };
  }
  throw new Error('expected a refusal');
}

describe('header parsing', () => {
  it('the vector headers parse: 32 nonce bytes, the timestamp in ms, the DER signature', () => {
    const h = parseSignedHeaders(headers(), 'ctl-1');
    expect(h.uuid).toBe('ctl-1');
    expect(h.nonce).toEqual(Buffer.from(v.nonce_base64, 'base64'));
    expect(h.nonceBase64).toBe(v.nonce_base64);
    expect(h.timestamp).toBe(v.timestamp);
    expect(h.timestampMs).toBe(Date.UTC(2026, 10, 21, 12, 0, 0));
    expect(h.signature).toEqual(Buffer.from(v.signature_der_base64, 'base64'));
  });

  it('strict Base64: padded, groups of four, standard alphabet only', () => {
    for (const [ok, bytes] of [['', 0], ['abcd', 3], ['aQ==', 1], ['abc=', 2], ['abcdABCD+/09', 9]] as const) expect(decodeBase64Strict(ok, 'x').length, ok).toBe(bytes);
    for (const bad of ['abc', 'abcde', 'a===', 'ab=c', 'ab-_', ' abcd', 'abcd\n', 'ab', 'abcdab=']) {
      expect(refusal(() => decodeBase64Strict(bad, 'x-device-nonce')), bad).toEqual({ code: 'invalid_base64', details: { header: 'x-device-nonce' } });
    }
  });

  it('a refusal names the header at fault', () => {
    expect(refusal(() => parseSignedHeaders(headers({ 'x-device-signature': 'abc' }), 'ctl-1'))).toEqual({ code: 'invalid_base64', details: { header: 'x-device-signature' } });
    expect(refusal(() => parseSignedHeaders(headers({ 'x-device-nonce': 'abc' }), 'ctl-1'))).toEqual({ code: 'invalid_base64', details: { header: 'x-device-nonce' } });
    expect(refusal(() => parseSignedHeaders(headers({ 'x-device-timestamp': '2026-11-21T24:00:00Z' }), 'ctl-1'))).toEqual({ code: 'invalid_header', details: { header: 'x-device-timestamp' } });
    expect(refusal(() => parseSignedHeaders(headers({ 'x-device-uuid': 'a b' }), 'a b'))).toEqual({ code: 'invalid_header', details: { header: 'x-device-uuid' } });
    expect(refusal(() => parseSignedHeaders(headers({ 'x-device-uuid': `x${'a'.repeat(64)}` }), `x${'a'.repeat(64)}`)).code).toBe('invalid_header');
    expect(refusal(() => parseSignedHeaders(headers({ 'x-device-uuid': 'ctl-1/../x' }), 'ctl-1/../x')).code).toBe('invalid_header');
    expect(refusal(() => parseSignedHeaders(headers(), 'ctl-2')).code).toBe('device_uuid_mismatch');
    expect(parseSignedHeaders(headers({ 'x-device-uuid': 'A-b_c9' }), 'A-b_c9').uuid).toBe('A-b_c9');
    expect(parseSignedHeaders(headers({ 'x-device-uuid': 'x'.repeat(64) }), 'x'.repeat(64)).uuid).toBe('x'.repeat(64));
  });
});

describe('several bad headers: the one reported', () => {
  // A missing (or repeated) header first, in the order UUID, nonce, timestamp, signature; then bad
  // values, in the order nonce, timestamp, signature, UUID (as the checks ran before the schema).
  const bad = { 'x-device-uuid': 'a b', 'x-device-nonce': 'abc', 'x-device-timestamp': 'yesterday', 'x-device-signature': 'abc' };
  const omit = (h: Record<string, string>, ...names: string[]) => Object.fromEntries(Object.entries(h).filter(([k]) => !names.includes(k)));
  const first = (h: Record<string, string | string[]>) => refusal(() => parseSignedHeaders(h, 'ctl-1'));

  it('absent or repeated before any bad value, in header order', () => {
    expect(first({})).toMatchObject({ code: 'missing_header', details: { header: 'x-device-uuid' } });
    expect(first(omit(bad, 'x-device-nonce', 'x-device-signature'))).toMatchObject({ code: 'missing_header', details: { header: 'x-device-nonce' } });
    expect(first(omit(bad, 'x-device-signature'))).toMatchObject({ code: 'missing_header', details: { header: 'x-device-signature' } });
    expect(first({ ...bad, 'x-device-timestamp': [v.timestamp, v.timestamp] })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-timestamp' } });
  });

  it('then bad values: nonce, timestamp, signature, UUID', () => {
    expect(first(bad)).toMatchObject({ code: 'invalid_base64', details: { header: 'x-device-nonce' } });
    expect(first({ ...bad, 'x-device-nonce': v.nonce_base64 })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-timestamp' } });
    expect(first({ ...bad, 'x-device-nonce': v.nonce_base64, 'x-device-timestamp': v.timestamp })).toMatchObject({ code: 'invalid_base64', details: { header: 'x-device-signature' } });
    expect(first({ ...headers(), 'x-device-uuid': 'a b' })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-uuid' } });
  });
});

describe('parseIsoUtc', () => {
  it('ISO 8601 UTC with Z, with or without up to 9 fractional digits', () => {
    expect(parseIsoUtc('2026-11-21T12:00:00Z')).toBe(Date.UTC(2026, 10, 21, 12));
    expect(parseIsoUtc('2026-11-21T12:00:00.5Z')).toBe(Date.UTC(2026, 10, 21, 12, 0, 0, 500));
    expect(parseIsoUtc('2026-11-21T12:00:00.123456789Z')).toBe(Date.UTC(2026, 10, 21, 12, 0, 0, 123));
    expect(parseIsoUtc('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29));
  });

  it('refuses other forms and every calendar roll-over Date.parse would accept', () => {
    for (const bad of [
      '+002026-11-21T12:00:00Z', // expanded year: Date.parse takes it
      '2026-11-21T24:00:00Z', // end of day: Date.parse rolls it to the next day
      '2026-12-31T24:00:00Z', // ... and into the next year
      '2026-02-29T00:00:00Z', // not a leap year
      '2026-02-31T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-11-21T12:00:00+00:00',
      '2026-11-21T12:00:00',
      '2026-11-21 12:00:00Z',
      '2026-11-21T12:00:00.1234567890Z',
      '2026-11-21T12:00:00Zjunk',
      'x2026-11-21T12:00:00Z',
      '2026-13-01T00:00:00Z',
    ]) {
      expect(parseIsoUtc(bad), bad).toBeNull();
    }
  });
});

describe('the signature', () => {
  const key = parseEnrolledKey(v.public_key_spki_pem)!;
  const h = parseSignedHeaders(headers(), 'ctl-1');

  it('the vector verifies over nonce || timestamp, and nothing else does', async () => {
    expect(signedMessage(h.nonce, h.timestamp)).toEqual(Buffer.concat([Buffer.from(v.nonce_base64, 'base64'), Buffer.from(v.timestamp, 'utf8')]));
    expect(verifyDeviceSignature(key, h)).toBe(true);
    expect(await verifyDeviceSignatureAsync(key, h)).toBe(true);
    const other = { ...h, timestamp: '2026-11-21T12:00:01Z' };
    expect(verifyDeviceSignature(key, other)).toBe(false);
    expect(await verifyDeviceSignatureAsync(key, other)).toBe(false);
  });

  it('a signature that is not DER is false, not an exception', async () => {
    for (const sig of [Buffer.from('3006020101020101', 'hex'), Buffer.alloc(8, 0xff), Buffer.alloc(72, 0x30)]) {
      expect(verifyDeviceSignature(key, { ...h, signature: sig })).toBe(false);
      expect(await verifyDeviceSignatureAsync(key, { ...h, signature: sig })).toBe(false);
    }
  });
});

describe('parseEnrolledKey (a stored key, read for verification)', () => {
  it('reads the canonical P-256 form as the full parse does: the same key, the same verdicts', async () => {
    const fast = parseEnrolledKey(v.public_key_spki_pem)!;
    const full = createPublicKey(v.public_key_spki_pem);
    expect(fast.equals(full)).toBe(true);
    expect(fast.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    const h = parseSignedHeaders(headers(), 'ctl-1');
    expect(await verifyDeviceSignatureAsync(fast, h)).toBe(true);
    expect(await verifyDeviceSignatureAsync(fast, { ...h, timestamp: '2026-11-21T12:00:01Z' })).toBe(false);
  });

  it('refuses a P-256 SPKI whose point is not on the curve', () => {
    const der = Buffer.from(v.public_key_spki_pem.split('\n').filter((l) => !l.startsWith('-----')).join(''), 'base64');
    expect(der.length).toBe(91);
    der[90]! ^= 1;
    const pem = `-----BEGIN PUBLIC KEY-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
    expect(parseEnrolledKey(pem)).toBeNull();
  });
});

describe('checkDevicePublicKey (enrollment)', () => {
  const pem = v.public_key_spki_pem;

  it('accepts the vector key and stores it canonically', () => {
    const r = checkDevicePublicKey(`\n  ${pem.replace(/\n/g, '\r\n')}  \n`);
    expect('key' in r && r.pem).toBe(pem);
  });

  it('one PEM block and nothing before or after it', () => {
    for (const bad of [`junk\n${pem}`, `${pem}junk\n`, `${pem}${pem}`, pem.replace('PUBLIC KEY-----\nM', 'PUBLIC KEY-----\n\nM'), 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE', '']) {
      const r = checkDevicePublicKey(bad);
      expect('reason' in r && r.reason, JSON.stringify(bad).slice(0, 60)).toBe('not_spki_pem');
      expect('reason' in r && r.message, JSON.stringify(bad).slice(0, 60)).toBe('public_key must be one PEM block -----BEGIN PUBLIC KEY----- (SPKI)');
    }
  });

  it('a PEM block whose Base64 is not an SPKI key is refused as such', () => {
    const r = checkDevicePublicKey('-----BEGIN PUBLIC KEY-----\nAAAAAAAA\n-----END PUBLIC KEY-----\n');
    expect(r).toEqual({ reason: 'not_spki_pem', message: 'public_key is not a valid SPKI public key' });
    expect(parseEnrolledKey('-----BEGIN PUBLIC KEY-----\nAAAAAAAA\n-----END PUBLIC KEY-----\n')).toBeNull();
  });

  it('private keys, RSA and other curves are refused with what they are', () => {
    const ec384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const ed = generateKeyPairSync('ed25519');
    expect(checkDevicePublicKey(ec384.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())).toMatchObject({ reason: 'private_key' });
    expect(checkDevicePublicKey(ec384.publicKey.export({ type: 'spki', format: 'pem' }).toString())).toStrictEqual({
      reason: 'unsupported_key',
      message: 'public_key must be an ECDSA P-256 (prime256v1) key',
      key_type: 'ec',
      curve: 'secp384r1',
    });
    expect(checkDevicePublicKey(rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString())).toStrictEqual({
      reason: 'unsupported_key',
      message: 'public_key must be an ECDSA P-256 (prime256v1) key',
      key_type: 'rsa',
    });
    expect(checkDevicePublicKey(ed.publicKey.export({ type: 'spki', format: 'pem' }).toString())).toMatchObject({ reason: 'unsupported_key', key_type: 'ed25519' });
    for (const k of [ec384, rsa, ed]) expect(parseEnrolledKey(k.publicKey.export({ type: 'spki', format: 'pem' }).toString())).toBeNull();
  });
});

describe('DeviceAuthenticator', () => {
  function storeWith(devices: Map<string, DeviceRecord>): CloudStore {
    const nonces = new Set<string>();
    return {
      getDevice: async (uuid: string) => devices.get(uuid) ?? null,
      recordNonce: async (uuid: string, nonce: string) => {
        const k = `${uuid} ${nonce}`;
        if (nonces.has(k)) return false;
        nonces.add(k);
        return true;
      },
    } as unknown as CloudStore;
  }
  let nonceByte = 0;
  const signed = (privateKey: Parameters<typeof sign>[2], timestamp: string) => {
    const nonce = Buffer.alloc(32, ++nonceByte);
    const signature = sign('sha256', signedMessage(nonce, timestamp), { key: privateKey as never, dsaEncoding: 'der' });
    return parseSignedHeaders(headers({ 'x-device-nonce': nonce.toString('base64'), 'x-device-timestamp': timestamp, 'x-device-signature': signature.toString('base64') }), 'ctl-1');
  };
  const codeOf = (p: Promise<void>) => p.then(() => 'ok', (e: ApiError) => e.code);

  it('after a device is enrolled again with a new key, its old key no longer verifies (no stale cached key)', async () => {
    const now = Date.UTC(2026, 10, 21, 12);
    const a = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const b = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const devices = new Map<string, DeviceRecord>();
    const enroll = (k: typeof a) => devices.set('ctl-1', { uuid: 'ctl-1', publicKeyPem: k.publicKey.export({ type: 'spki', format: 'pem' }).toString(), enrolledAt: '', updatedAt: '' });
    const auth = new DeviceAuthenticator(storeWith(devices), 300, () => now);
    enroll(a);
    expect(await codeOf(auth.authenticate(signed(a.privateKey, '2026-11-21T12:00:00Z')))).toBe('ok');
    expect(await codeOf(auth.authenticate(signed(a.privateKey, '2026-11-21T12:00:01Z')))).toBe('ok');
    enroll(b);
    expect(await codeOf(auth.authenticate(signed(a.privateKey, '2026-11-21T12:00:02Z')))).toBe('invalid_signature');
    expect(await codeOf(auth.authenticate(signed(b.privateKey, '2026-11-21T12:00:03Z')))).toBe('ok');
    devices.set('ctl-1', { ...devices.get('ctl-1')!, publicKeyPem: 'not a key' });
    expect(await codeOf(auth.authenticate(signed(b.privateKey, '2026-11-21T12:00:04Z')))).toBe('invalid_signature');
    devices.delete('ctl-1');
    expect(await codeOf(auth.authenticate(signed(b.privateKey, '2026-11-21T12:00:05Z')))).toBe('unknown_device');
  });
});
