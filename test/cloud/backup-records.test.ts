// The cloud backup routes at the points the other backup tests pass by: a GET or DELETE when the
// device has no backup (404, DESIGN.md section 4), the very first upload carrying ETag and
// If-None-Match (nothing stored to compare with: stored, 200), Content-Type with parameters and
// without one (spec 4.1: required, application/octet-stream), the header a bad If-None-Match names,
// and what svc-func-backup writes at INFO (docs/appconfig-deployments.md: one record per store,
// retrieve and delete) - by fields: the device and the size, never the signature or nonce.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyObject } from 'node:crypto';
import { ffceBlob, startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const HEX = 'a'.repeat(64);
let clock = Date.parse('2026-11-21T12:00:00Z');
let cloud: TestCloud;
let key: KeyObject;

beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock });
});
afterAll(() => cloud.close());

// The enrollment and the INFO level are set up inside the first test that needs them, not in
// beforeAll: code run outside a test makes its mutants "static" for Stryker (slow to test).
let setup: Promise<void> | undefined;
const ready = () =>
  (setup ??= (async () => {
    key = (await cloud.enroll('dev-rec')).privateKey;
    await cloud.admin('PATCH', '/appconfig/svc-func-backup', { logging: 'INFO' });
    await cloud.admin('POST', '/appconfig/svc-func-backup/deploy');
  })());

const signed = () => {
  clock += 1000; // a fresh timestamp (and nonce) for every request
  return cloud.signed(key, 'dev-rec', { nowMs: clock });
};
const call = async (method: string, headers: Record<string, string> = {}, body?: Buffer) =>
  (await ready(), fetch(`${cloud.url}/devices/dev-rec/backup`, { method, headers: { ...signed(), ...headers }, ...(body ? { body } : {}) }));
const backupRecords = () => (cloud.logs as unknown as Record<string, unknown>[]).filter((r) => r.function === 'svc-func-backup');

it('no backup yet: GET and DELETE are 404 backup_not_found', async () => {
  for (const method of ['GET', 'DELETE']) {
    const res = await call(method);
    expect(res.status, method).toBe(404);
    expect(((await res.json()) as { error: string }).error, method).toBe('backup_not_found');
  }
});

it('the first upload with ETag and If-None-Match is stored (200): there is nothing to be unchanged from', async () => {
  const res = await call('POST', { 'content-type': 'application/octet-stream', etag: `"${HEX}"`, 'if-none-match': `"${HEX}"` }, ffceBlob());
  expect(res.status).toBe(200);
  expect(((await res.json()) as { message: string }).message).toBe('Backup stored');
  const again = await call('POST', { 'content-type': 'application/octet-stream', etag: `"${HEX}"`, 'if-none-match': `"${HEX}"` }, ffceBlob());
  expect(again.status).toBe(304);
});

it('Content-Type: parameters and spaces around the type are fine; absent or another type is 400 invalid_content_type', async () => {
  expect((await call('POST', { 'content-type': 'Application/Octet-Stream ; x=1' }, ffceBlob())).status).toBe(200);
  for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
    const res = await call('POST', headers, ffceBlob());
    expect(res.status, JSON.stringify(headers)).toBe(400);
    expect(((await res.json()) as { error: string }).error, JSON.stringify(headers)).toBe('invalid_content_type');
  }
});

it('a malformed If-None-Match is a 400 naming that header', async () => {
  const res = await call('POST', { 'content-type': 'application/octet-stream', etag: `"${HEX}"`, 'if-none-match': 'not-an-etag' }, ffceBlob());
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ error: 'invalid_header', details: { header: 'if-none-match' } });
});

it('svc-func-backup at INFO: one record per store, retrieve and delete, naming the device and the size, never the signature or nonce', async () => {
  await ready();
  cloud.logs.length = 0;
  const blob = ffceBlob(100);
  const headers = { 'content-type': 'application/octet-stream', etag: `"${'b'.repeat(64)}"` };
  const h = signed();
  const stored = await fetch(`${cloud.url}/devices/dev-rec/backup`, { method: 'POST', headers: { ...h, ...headers }, body: blob });
  expect(stored.status).toBe(200);
  expect((await call('GET')).status).toBe(200);
  expect((await call('DELETE')).status).toBe(204);
  const records = backupRecords().filter((r) => r.level === 'INFO');
  expect(records).toHaveLength(3);
  expect(records[0]).toMatchObject({ uuid: 'dev-rec', size: blob.length, etag: 'b'.repeat(64) });
  expect(records[1]).toMatchObject({ uuid: 'dev-rec', size: blob.length });
  expect(records[2]).toMatchObject({ uuid: 'dev-rec' });
  const messages = records.map((r) => String(r.msg ?? r.message ?? ''));
  for (const m of messages) expect(m.trim()).not.toBe('');
  expect(new Set(messages).size).toBe(3);
  const text = JSON.stringify(backupRecords());
  expect(text).not.toContain(h['x-device-signature']!);
  expect(text).not.toContain(h['x-device-nonce']!);
});

it('an upload that will be a 304 still has its framing checked: not FFCE, or too short, is 400 invalid_backup_format', async () => {
  const etag = { 'content-type': 'application/octet-stream', etag: `"${'c'.repeat(64)}"`, 'if-none-match': `"${'c'.repeat(64)}"` };
  expect((await call('POST', etag, ffceBlob())).status).toBe(200);
  for (const [what, body] of [['not FFCE', Buffer.alloc(64, 0x41)], ['too short', ffceBlob(3)]] as const) {
    const res = await call('POST', etag, body);
    expect(res.status, what).toBe(400);
    expect(((await res.json()) as { error: string }).error, what).toBe('invalid_backup_format');
  }
  expect((await call('POST', etag, ffceBlob())).status).toBe(304);
  expect((await call('POST', etag, ffceBlob(28))).status, 'the shortest FFCE blob, 32 bytes').toBe(304);
});

it('a path UUID that is not one is 400 invalid_uuid', async () => {
  await ready();
  const res = await fetch(`${cloud.url}/devices/a%20b/backup`, { headers: signed() });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: string }).error).toBe('invalid_uuid');
});
