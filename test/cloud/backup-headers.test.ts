// The pure checks behind POST/GET/DELETE /devices/{uuid}/backup (spec 5.1, 4.1; DESIGN.md section 3),
// one rule per assertion: ETag and If-None-Match parsing, the FFCE framing the cloud accepts, the
// signed headers (400/403), the timestamp format, and the signature over nonce || timestamp.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../cloud/errors.ts';
import { DeviceAuthenticator, decodeBase64Strict, parseIsoUtc, parseSignedHeaders, signedMessage, verifyDeviceSignature } from '../../cloud/auth/device-signature.ts';
import { formatEtag, parseEtag, parseIfNoneMatch } from '../../cloud/backup/etag.ts';
import { FFCE_MIN_BYTES, isFfceBlob, MAX_BACKUP_BYTES } from '../../cloud/backup/ffce.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';

const HEX = 'ab'.repeat(32);

/** The ApiError a call throws: its code, details and message. */
function refusal(fn: () => unknown): { code: string; details: unknown; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, details: err.details, message: err.message };
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('ETag parsing', () => {
  it('accepts a SHA-256 hex digest bare, quoted, weak, in any case, with spaces around; returns it lowercase', () => {
    for (const v of [HEX, `"${HEX}"`, `W/"${HEX}"`, ` ${HEX.toUpperCase()} `, `"${HEX.toUpperCase()}"`]) expect(parseEtag(v, 'etag'), v).toBe(HEX);
    expect(formatEtag(HEX)).toBe(`"${HEX}"`);
  });

  it('refuses anything else with 400 invalid_header naming the header', () => {
    // A quote on one side only, with a character on the other, must not be cut off as if it were quoted.
    for (const v of ['', '"', `"${HEX}`, `${HEX}"`, HEX.slice(1), `${HEX}0`, `z${HEX}`, `a${HEX}"`, `"${HEX}a`, 'g'.repeat(64), `"${HEX.slice(2)}"`, `W/${HEX.slice(1)}`]) {
      const r = refusal(() => parseEtag(v, 'if-none-match'));
      expect(r, v).toEqual({ code: 'invalid_header', details: { header: 'if-none-match' }, message: 'The if-none-match header must be a SHA-256 hex digest, quoted or bare' });
    }
    expect(refusal(() => parseEtag([HEX, HEX], 'etag'))).toEqual({ code: 'invalid_header', details: { header: 'etag' }, message: 'The etag header must appear once' });
  });

  it('If-None-Match: * or 1 to 16 ETags, comma separated, across repeated headers', () => {
    expect(parseIfNoneMatch(' * ', 'if-none-match')).toBe('*');
    expect(parseIfNoneMatch(`"${HEX}", ${'cd'.repeat(32)},`, 'if-none-match')).toEqual([HEX, 'cd'.repeat(32)]);
    expect(parseIfNoneMatch([HEX, `"${'cd'.repeat(32)}"`], 'if-none-match')).toEqual([HEX, 'cd'.repeat(32)]);
    expect(parseIfNoneMatch(Array(16).fill(HEX).join(','), 'if-none-match')).toHaveLength(16);
    for (const v of [',', ' , ', Array(17).fill(HEX).join(',')]) {
      expect(refusal(() => parseIfNoneMatch(v, 'if-none-match')), v).toEqual({ code: 'invalid_header', details: { header: 'if-none-match' }, message: 'The if-none-match header must list 1 to 16 ETags' });
    }
    expect(refusal(() => parseIfNoneMatch(`${HEX}, nope`, 'if-none-match')).code).toBe('invalid_header');
  });
});

describe('FFCE framing as the cloud checks it', () => {
  const blob = (n: number, magic = 'FFCE') => Buffer.concat([Buffer.from(magic, 'ascii'), Buffer.alloc(n - 4, 1)]);
  it('magic FFCE, at least magic + IV + tag (32 bytes), at most 512 KB', () => {
    expect(FFCE_MIN_BYTES).toBe(32);
    expect(MAX_BACKUP_BYTES).toBe(524_288);
    expect(isFfceBlob(blob(32))).toBe(true);
    expect(isFfceBlob(blob(31))).toBe(false);
    expect(isFfceBlob(blob(524_288))).toBe(true);
    expect(isFfceBlob(blob(524_289))).toBe(false);
    for (const magic of ['FFCD', 'ffce', 'EFCE', 'FFC\0']) expect(isFfceBlob(blob(64, magic)), magic).toBe(false);
  });
});

describe('the signed headers', () => {
  const nonce = Buffer.alloc(32, 5);
  const good = { 'x-device-uuid': 'dev-1', 'x-device-nonce': nonce.toString('base64'), 'x-device-timestamp': '2026-11-21T12:00:00Z', 'x-device-signature': Buffer.alloc(70, 3).toString('base64') };

  it('parses the four headers', () => {
    const h = parseSignedHeaders({ ...good, 'x-device-uuid': ' dev-1 ' }, 'dev-1');
    expect(h).toEqual({ uuid: 'dev-1', nonce, nonceBase64: nonce.toString('base64'), timestamp: '2026-11-21T12:00:00Z', timestampMs: Date.parse('2026-11-21T12:00:00Z'), signature: Buffer.alloc(70, 3) });
  });

  it('each missing or blank header is 400 missing_header naming it; a repeated one 400 invalid_header', () => {
    for (const name of Object.keys(good)) {
      for (const value of [undefined, '', '   ']) {
        const headers: Record<string, string | undefined> = { ...good, [name]: value };
        expect(refusal(() => parseSignedHeaders(headers, 'dev-1')), `${name}=${value}`).toEqual({ code: 'missing_header', details: { header: name }, message: `The ${name} header is required` });
      }
      expect(refusal(() => parseSignedHeaders({ ...good, [name]: ['a', 'b'] }, 'dev-1'))).toEqual({ code: 'invalid_header', details: { header: name }, message: `${name}: expected one value, got an array` });
    }
  });

  it('the nonce must be strict Base64 of exactly 32 bytes', () => {
    for (const n of [31, 33, 0]) {
      const r = refusal(() => parseSignedHeaders({ ...good, 'x-device-nonce': n === 0 ? '====' : Buffer.alloc(n, 1).toString('base64') }, 'dev-1'));
      expect(r.code, String(n)).toBe(n === 0 ? 'invalid_base64' : 'invalid_header');
      if (n !== 0) expect(r).toEqual({ code: 'invalid_header', details: { header: 'x-device-nonce', bytes: n }, message: `x-device-nonce: expected Base64 of 32 bytes, got ${JSON.stringify(Buffer.alloc(n, 1).toString('base64'))} (${n} bytes)` });
    }
    for (const bad of [nonce.toString('base64url'), nonce.toString('base64').replace(/=+$/, ''), ` ${nonce.toString('base64')}x`]) {
      expect(refusal(() => parseSignedHeaders({ ...good, 'x-device-nonce': bad }, 'dev-1')), bad).toMatchObject({ code: 'invalid_base64', details: { header: 'x-device-nonce' } });
    }
  });

  it('strict Base64: the standard alphabet with its padding, nothing else', () => {
    expect(decodeBase64Strict('QUJD', 'h')).toEqual(Buffer.from('ABC'));
    expect(decodeBase64Strict('QUI=', 'h')).toEqual(Buffer.from('AB'));
    expect(decodeBase64Strict('QQ==', 'h')).toEqual(Buffer.from('A'));
    expect(decodeBase64Strict('', 'h')).toEqual(Buffer.alloc(0));
    for (const bad of ['QQ', 'QUI', 'Q===', 'QU-_', 'QUJD\n', 'Q UJD', '=QUJ', 'QUJDQ']) {
      expect(refusal(() => decodeBase64Strict(bad, 'x-h')), bad).toEqual({ code: 'invalid_base64', details: { header: 'x-h' }, message: `x-h: expected strict Base64 (standard alphabet, padded), got ${JSON.stringify(bad)}` });
    }
  });

  it('the signature: Base64 of 8 to 72 bytes', () => {
    for (const [n, ok] of [[7, false], [8, true], [72, true], [73, false]] as const) {
      const headers = { ...good, 'x-device-signature': Buffer.alloc(n, 1).toString('base64') };
      if (ok) expect(parseSignedHeaders(headers, 'dev-1').signature).toHaveLength(n);
      else expect(refusal(() => parseSignedHeaders(headers, 'dev-1')), String(n)).toEqual({ code: 'invalid_header', details: { header: 'x-device-signature' }, message: `x-device-signature: expected a DER ECDSA P-256 signature (8 to 72 bytes), got ${JSON.stringify(headers['x-device-signature'].slice(0, 64) + (n > 48 ? '…' : ''))}` });
    }
  });

  it('the UUID: 1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit, and equal to the path (else 403 device_uuid_mismatch)', () => {
    expect(parseSignedHeaders({ ...good, 'x-device-uuid': 'A-b_c-d-9' }, 'A-b_c-d-9').uuid).toBe('A-b_c-d-9');
    expect(parseSignedHeaders({ ...good, 'x-device-uuid': 'x'.repeat(64) }, 'x'.repeat(64)).uuid).toHaveLength(64);
    for (const bad of ['x'.repeat(65), 'a/b', 'a b', 'ä', 'a%2F']) {
      expect(refusal(() => parseSignedHeaders({ ...good, 'x-device-uuid': bad }, bad)), bad).toEqual({ code: 'invalid_header', details: { header: 'x-device-uuid' }, message: `x-device-uuid: expected 1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit, got ${JSON.stringify(bad.slice(0, 64) + (bad.length > 64 ? '…' : ''))}` });
    }
    expect(refusal(() => parseSignedHeaders(good, 'dev-2')).code).toBe('device_uuid_mismatch');
    expect(refusal(() => parseSignedHeaders(good, 'DEV-1')).code).toBe('device_uuid_mismatch');
  });

  it('the timestamp: ISO 8601 UTC with Z, fractions allowed, no calendar overflow', () => {
    expect(parseIsoUtc('2026-11-21T12:00:00Z')).toBe(Date.UTC(2026, 10, 21, 12));
    expect(parseIsoUtc('2026-11-21T12:00:00.5Z')).toBe(Date.UTC(2026, 10, 21, 12, 0, 0, 500));
    expect(parseIsoUtc('2026-11-21T12:00:00.123456789Z')).toBe(Date.UTC(2026, 10, 21, 12, 0, 0, 123));
    expect(parseIsoUtc('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    for (const bad of ['2026-11-21T12:00:00', '2026-11-21T12:00:00+00:00', '2026-11-21 12:00:00Z', '2026-11-21T12:00:00.Z', '2026-11-21T12:00:00.1234567890Z', 'x2026-11-21T12:00:00Z', '2026-11-21T12:00:00Zx', '2025-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-11-21T24:00:01Z']) {
      expect(parseIsoUtc(bad), bad).toBeNull();
    }
    expect(refusal(() => parseSignedHeaders({ ...good, 'x-device-timestamp': '2026-02-30T00:00:00Z' }, 'dev-1'))).toEqual({
      code: 'invalid_header',
      details: { header: 'x-device-timestamp' },
      message: 'x-device-timestamp: expected an ISO 8601 UTC timestamp such as 2026-11-21T12:00:00Z, got "2026-02-30T00:00:00Z"',
    });
  });

  it('the signature covers nonce then timestamp, SHA-256, DER', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const timestamp = '2026-11-21T12:00:00Z';
    expect(signedMessage(nonce, timestamp)).toEqual(Buffer.concat([nonce, Buffer.from(timestamp)]));
    const signature = sign('sha256', Buffer.concat([nonce, Buffer.from(timestamp)]), { key: privateKey, dsaEncoding: 'der' });
    expect(verifyDeviceSignature(publicKey, { nonce, timestamp, signature })).toBe(true);
    expect(verifyDeviceSignature(publicKey, { nonce, timestamp: '2026-11-21T12:00:01Z', signature })).toBe(false);
    const swapped = sign('sha256', Buffer.concat([Buffer.from(timestamp), nonce]), { key: privateKey, dsaEncoding: 'der' });
    expect(verifyDeviceSignature(publicKey, { nonce, timestamp, signature: swapped })).toBe(false);
    const p1363 = sign('sha256', signedMessage(nonce, timestamp), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    expect(verifyDeviceSignature(publicKey, { nonce, timestamp, signature: p1363 })).toBe(false);
    expect(verifyDeviceSignature(publicKey, { nonce, timestamp, signature: Buffer.alloc(3) })).toBe(false);
  });
});

describe('DeviceAuthenticator', () => {
  it('401s in order: unknown device, stale timestamp (window either side, inclusive), bad signature, replayed nonce; a nonce expires with its window', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      await store.putDevice('dev-1', publicKey.export({ type: 'spki', format: 'pem' }).toString(), '2026-11-21T12:00:00Z');
      let now = Date.UTC(2026, 10, 21, 12);
      const auth = new DeviceAuthenticator(store, 300, () => now);
      const signed = (timestampMs: number, n = Math.random()) => {
        const nonceBytes = Buffer.alloc(32);
        nonceBytes.writeDoubleLE(n);
        const timestamp = new Date(timestampMs).toISOString();
        return parseSignedHeaders(
          { 'x-device-uuid': 'dev-1', 'x-device-nonce': nonceBytes.toString('base64'), 'x-device-timestamp': timestamp, 'x-device-signature': sign('sha256', signedMessage(nonceBytes, timestamp), { key: privateKey, dsaEncoding: 'der' }).toString('base64') },
          'dev-1',
        );
      };
      const code = async (h: ReturnType<typeof signed>) => auth.authenticate(h).then(() => 'ok', (e: ApiError) => e.code);
      expect(await code({ ...signed(now), uuid: 'dev-2' })).toBe('unknown_device');
      expect(await code(signed(now - 300_000))).toBe('ok');
      expect(await code(signed(now + 300_000))).toBe('ok');
      expect(await code(signed(now - 300_001))).toBe('timestamp_out_of_window');
      expect(await code(signed(now + 300_001))).toBe('timestamp_out_of_window');
      const stale = await auth.authenticate(signed(now - 400_000)).catch((e: ApiError) => e);
      expect((stale as ApiError).details).toEqual({ window_seconds: 300 });
      expect(await code({ ...signed(now), signature: signed(now).signature })).toBe('invalid_signature');
      const once = signed(now, 0.25);
      expect(await code(once)).toBe('ok');
      expect(await code(once)).toBe('nonce_replayed');
      // A refused signature does not consume its nonce.
      const h = signed(now, 0.5);
      expect(await code({ ...h, signature: signed(now, 0.75).signature })).toBe('invalid_signature');
      expect(await code(h)).toBe('ok');
      // At timestamp + window the nonce may be forgotten: by then its timestamp is refused anyway.
      now += 299_999;
      expect(await code(once)).toBe('nonce_replayed');
    } finally {
      await store.close();
    }
  });
});
