// The device UUID grammar of the cloud (issue 14 follow-up) and the signed-request headers checked
// from their one declaration (cloud/schema/api.ts DeviceSignatureHeaders). A device UUID is the
// storage key of its backup (spec 2.2) and the firmware names its own records by it, so the cloud
// takes the firmware's strict grammar (firmware/src/core/ids.ts): no ".", no ":", a letter or a
// digit first. Over real sockets for the path parameter, directly for the header check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../cloud/errors.ts';
import { parseIsoUtc, parseSignedHeaders } from '../../cloud/auth/device-signature.ts';
import { DEVICE_UUID_PATTERN, DEVICE_UUID_RULE, DeviceSignatureHeaders, DeviceUuid } from '../../cloud/schema/api.ts';
import { checker } from '../../cloud/schema/validator.ts';
import { UUID_PATTERN, UUID_RULE } from '../../firmware/src/core/ids.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const GOOD = ['ctl-xs-0001', 'lamp-0', 'A', '0', '9_a', 'a_', 'a-', '123e4567-e89b-12d3-a456-426614174000', 'x'.repeat(64)];
const BAD = ['', '.', '..', 'a.b', 'a:b', 'ctl.1', 'AA:BB:CC:DD:EE:FF', '-a', '_a', 'x'.repeat(65), 'a/b', 'a b', 'a%2F', 'ä', 'a\u0000'];

describe('the device UUID grammar', () => {
  it('is the firmware grammar, word for word', () => {
    expect(DEVICE_UUID_PATTERN).toBe(UUID_PATTERN);
    expect(DEVICE_UUID_RULE).toBe(UUID_RULE);
    expect(DeviceUuid.pattern).toBe(DEVICE_UUID_PATTERN);
  });

  it('accepts names and RFC 4122 UUIDs; refuses ".", ":", a leading "-" or "_", and more than 64 characters', () => {
    const check = checker(DeviceUuid);
    for (const u of GOOD) expect(check(u), u).toBe(true);
    for (const u of BAD) expect(check(u), JSON.stringify(u)).toBe(false);
  });
});

describe('the path parameter {uuid}', () => {
  let cloud: TestCloud;
  beforeAll(async () => {
    cloud = await startTestCloud();
  });
  afterAll(() => cloud.close());

  it('admin: a UUID with "." or ":" or a leading "-" is 400 invalid_uuid naming the value; nothing is enrolled', async () => {
    for (const uuid of ['a.b', 'ctl:1', '-lead', '_lead', 'x'.repeat(65)]) {
      const r = await cloud.admin('PUT', `/admin/devices/${encodeURIComponent(uuid)}`, { public_key: 'irrelevant' });
      expect(r.status, uuid).toBe(400);
      expect(await r.json(), uuid).toEqual({
        error: 'invalid_uuid',
        message: `uuid: expected ${UUID_RULE}, got ${JSON.stringify(uuid.slice(0, 64) + (uuid.length > 64 ? '…' : ''))}`,
        details: { field: 'uuid', value: uuid.slice(0, 64), expected: UUID_RULE },
      });
    }
    expect(await (await cloud.admin('GET', '/admin/devices')).json()).toEqual({ devices: [], next_after: null });
  });

  it('backup: 400 invalid_uuid on every method, before the signature headers are looked at', async () => {
    const dev = await cloud.enroll('dev-1');
    for (const method of ['POST', 'GET', 'DELETE']) {
      for (const uuid of ['dev.1', 'dev:1']) {
        const r = await fetch(`${cloud.url}/devices/${uuid}/backup`, {
          method,
          headers: { ...cloud.signed(dev.privateKey, uuid), 'content-type': 'application/octet-stream' },
          ...(method === 'POST' ? { body: Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(40)]) } : {}),
        });
        expect(r.status, `${method} ${uuid}`).toBe(400);
        expect(((await r.json()) as { error: string }).error, `${method} ${uuid}`).toBe('invalid_uuid');
      }
    }
  });

  it('a strict UUID still works end to end (enroll, signed upload)', async () => {
    const uuid = '123e4567-e89b-12d3-a456-426614174000';
    const dev = await cloud.enroll(uuid);
    const r = await fetch(`${cloud.url}/devices/${uuid}/backup`, {
      method: 'POST',
      headers: { ...cloud.signed(dev.privateKey, uuid), 'content-type': 'application/octet-stream' },
      body: Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(40, 1)]),
    });
    expect(r.status).toBe(200);
  });

  it('/openapi.json documents the strict pattern for every {uuid} and for X-Device-UUID', async () => {
    const doc = (await (await fetch(`${cloud.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: { pattern?: string; allOf?: { pattern?: string }[] } }[] }>> };
    let seen = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const p of op.parameters ?? []) {
          if (p.in === 'path' && p.name === 'uuid') {
            expect(p.schema.pattern, path).toBe(UUID_PATTERN);
            seen++;
          }
          if (p.in === 'header' && p.name === 'x-device-uuid') {
            expect(p.schema.allOf?.[0]?.pattern, path).toBe(UUID_PATTERN);
            seen++;
          }
        }
      }
    }
    expect(seen).toBeGreaterThanOrEqual(9);
  });
});

describe('the signed-request headers, checked by their schema', () => {
  const nonce = Buffer.alloc(32, 9).toString('base64');
  const good = { 'x-device-uuid': 'dev-1', 'x-device-nonce': nonce, 'x-device-timestamp': '2026-11-21T12:00:00Z', 'x-device-signature': Buffer.alloc(70, 3).toString('base64') };
  function refusal(headers: Record<string, string | string[] | undefined>, path = 'dev-1') {
    try {
      parseSignedHeaders(headers, path);
    } catch (err) {
      if (err instanceof ApiError) return { code: err.code, details: err.details, message: err.message };
      throw err;
    }
    throw new Error('expected a refusal');
  }

  it('the header checks are the declaration: the same schema object is what /openapi.json shows', () => {
    expect(Object.keys(DeviceSignatureHeaders.properties)).toEqual(['x-device-uuid', 'x-device-nonce', 'x-device-timestamp', 'x-device-signature']);
    expect(DeviceSignatureHeaders.required).toEqual(['x-device-uuid', 'x-device-nonce', 'x-device-timestamp', 'x-device-signature']);
  });

  it('a header UUID with "." or ":" is 400 invalid_header naming the header and the value', () => {
    for (const uuid of ['dev.1', 'dev:1', '-dev']) {
      expect(refusal({ ...good, 'x-device-uuid': uuid }, uuid), uuid).toEqual({
        code: 'invalid_header',
        details: { header: 'x-device-uuid' },
        message: `x-device-uuid: expected ${UUID_RULE}, got ${JSON.stringify(uuid)}`,
      });
    }
  });

  it('the order of checks: presence and single value header by header, then nonce, timestamp, signature, UUID values, then the path', () => {
    const allBad = { 'x-device-uuid': 'a.b', 'x-device-nonce': 'abc', 'x-device-timestamp': 'yesterday', 'x-device-signature': 'QQ==' };
    // A missing header is reported before any bad value, the first missing one first.
    expect(refusal({ ...allBad, 'x-device-signature': undefined, 'x-device-timestamp': '  ' }).details).toEqual({ header: 'x-device-timestamp' });
    expect(refusal({ ...allBad, 'x-device-signature': ['a', 'b'] })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-signature' } });
    expect(refusal({ ...allBad, 'x-device-uuid': ['a', 'b'], 'x-device-nonce': undefined })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-uuid' } });
    // Then the values, in the order nonce (Base64 before length), timestamp, signature, UUID.
    expect(refusal(allBad)).toEqual({ code: 'invalid_base64', details: { header: 'x-device-nonce' }, message: 'x-device-nonce: expected strict Base64 (standard alphabet, padded), got "abc"' });
    expect(refusal({ ...allBad, 'x-device-nonce': 'QUJD' })).toEqual({ code: 'invalid_header', details: { header: 'x-device-nonce', bytes: 3 }, message: 'x-device-nonce: expected Base64 of 32 bytes, got "QUJD" (3 bytes)' });
    expect(refusal({ ...allBad, 'x-device-nonce': nonce })).toEqual({
      code: 'invalid_header',
      details: { header: 'x-device-timestamp' },
      message: 'x-device-timestamp: expected an ISO 8601 UTC timestamp such as 2026-11-21T12:00:00Z, got "yesterday"',
    });
    expect(refusal({ ...allBad, 'x-device-nonce': nonce, 'x-device-timestamp': good['x-device-timestamp'] })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-signature' } });
    expect(refusal({ ...allBad, 'x-device-nonce': nonce, 'x-device-timestamp': good['x-device-timestamp'], 'x-device-signature': 'QUJD' })).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-signature' } });
    expect(refusal({ ...allBad, 'x-device-nonce': nonce, 'x-device-timestamp': good['x-device-timestamp'], 'x-device-signature': 'Q' })).toMatchObject({ code: 'invalid_base64', details: { header: 'x-device-signature' } });
    expect(refusal({ ...good, 'x-device-uuid': 'a.b' }, 'dev-1')).toMatchObject({ code: 'invalid_header', details: { header: 'x-device-uuid' } });
    expect(refusal(good, 'dev-2').code).toBe('device_uuid_mismatch');
  });

  it('the timestamp: a real calendar day, hours 00 to 23, seconds 00 to 59, 1 to 9 fraction digits, Z', () => {
    for (const ok of ['2024-02-29T00:00:00Z', '2000-02-29T23:59:59.999999999Z', '2026-12-31T00:00:00.5Z', '2026-04-30T12:00:00Z', '0000-02-29T00:00:00Z']) {
      expect(parseIsoUtc(ok), ok).toBe(Date.parse(ok));
    }
    for (const bad of ['1900-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2026-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-11-21T23:59:60Z', '2026-11-21T24:00:00Z', '2026-11-21T12:60:00Z', '2026-11-21t12:00:00z', '2026-11-21T12:00:00.Z']) {
      expect(parseIsoUtc(bad), bad).toBeNull();
    }
  });

  it('accepts the good headers, trimmed, and decodes them', () => {
    const h = parseSignedHeaders({ ...good, 'x-device-uuid': ' dev-1 ' }, 'dev-1');
    expect(h).toMatchObject({ uuid: 'dev-1', nonce: Buffer.alloc(32, 9), nonceBase64: nonce, timestampMs: Date.UTC(2026, 10, 21, 12), signature: Buffer.alloc(70, 3) });
  });
});
