// The admin API: enroll/re-enroll/remove devices, release/revoke/list firmware, with validation.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud();
});
afterAll(() => cloud.close());

const pem = (curve = 'prime256v1') =>
  generateKeyPairSync('ec', { namedCurve: curve }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('devices', () => {
  it('enrolls (201), re-enrolls (200), shows and lists a device', async () => {
    const key1 = pem();
    const a = await cloud.admin('PUT', '/admin/devices/dev-a', { public_key: key1 });
    expect(a.status).toBe(201);
    expect(await a.json() as any).toMatchObject({ uuid: 'dev-a', public_key: key1 });
    const key2 = pem();
    const b = await cloud.admin('PUT', '/admin/devices/dev-a', { public_key: key2 });
    expect(b.status).toBe(200);
    const shown = await (await cloud.admin('GET', '/admin/devices/dev-a')).json() as any;
    expect(shown).toMatchObject({ uuid: 'dev-a', public_key: key2, backup: null });
    const list = await (await cloud.admin('GET', '/admin/devices')).json() as any;
    expect(list.devices.map((d: { uuid: string }) => d.uuid)).toContain('dev-a');
  });

  it.each([
    ['not PEM', 'hello'],
    ['an RSA key', generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString()],
    ['a P-384 key', pem('secp384r1')],
    ['a number', 42],
  ])('refuses %s as public key with 400', async (_label, public_key) => {
    const res = await cloud.admin('PUT', '/admin/devices/dev-b', { public_key });
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_public_key');
    expect((await cloud.admin('GET', '/admin/devices/dev-b')).status).toBe(404);
  });

  it('refuses an invalid UUID with 400', async () => {
    const res = await cloud.admin('PUT', '/admin/devices/has%20space', { public_key: pem() });
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_uuid');
  });

  it('removes a device (204), then 404; the removed device can no longer authenticate', async () => {
    const dev = await cloud.enroll('dev-c');
    expect((await cloud.admin('DELETE', '/admin/devices/dev-c')).status).toBe(204);
    expect((await cloud.admin('DELETE', '/admin/devices/dev-c')).status).toBe(404);
    const res = await fetch(`${cloud.url}/devices/dev-c/backup`, { headers: cloud.signed(dev.privateKey, 'dev-c') });
    expect(res.status).toBe(401);
  });

  it('needs a super user', async () => {
    const res = await fetch(`${cloud.url}/admin/devices`, { headers: { authorization: `Bearer ${await cloud.token(['x'])}` } });
    expect(res.status).toBe(403);
    expect((await fetch(`${cloud.url}/admin/devices`)).status).toBe(401);
  });
});

describe('firmware', () => {
  const track = '/admin/firmware/ctl/0x000000AA/ctl';

  it('releases with metadata (201), refuses the same version again (409)', async () => {
    const res = await cloud.admin('PUT', `${track}/2026.01.01`, { url: 'https://fw.test/a.bin', size: 1234, sha256: 'AB'.repeat(32) });
    expect(res.status).toBe(201);
    expect(await res.json() as any).toMatchObject({ version: '2026.01.01', status: 'RELEASED', product_hex: '0x000000aa', sha256: 'ab'.repeat(32) });
    const again = await cloud.admin('PUT', `${track.replace('AA', 'aa')}/2026.01.01`, { url: 'https://fw.test/again.bin' });
    expect(again.status).toBe(409);
    expect((await again.json() as any).error).toBe('release_exists');
  });

  it.each([
    [{ size: -1 }],
    [{ size: 1.5 }],
    [{ sha256: 'xyz' }],
    [{ url: 'ftp://x/y' }],
    [{ url: 'not a url' }],
    [{ colour: 'red' }],
    [[1, 2]],
  ])('refuses metadata %j with 400 and stores nothing', async (meta) => {
    const res = await cloud.admin('PUT', `${track}/2026.05.01`, meta);
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_release_metadata');
    const list = await (await cloud.admin('GET', track)).json() as any;
    expect(list.versions.map((v: { version: string }) => v.version)).not.toContain('2026.05.01');
  });

  it('refuses a release devices could not download (no url, no "no_image": true) with 400 image_required, and stores nothing', async () => {
    const other = '/admin/firmware/ctl/0x000000AB/ctl';
    for (const meta of [undefined, {}, { size: 10, sha256: 'ab'.repeat(32) }, { rollout: { percent: 10 } }]) {
      const res = await cloud.admin('PUT', `${other}/2026.06.01`, meta);
      expect(res.status, JSON.stringify(meta)).toBe(400);
      expect(await res.json()).toMatchObject({
        error: 'image_required',
        message: 'A release needs its image: a url devices download it from, or PUT …/image for the cloud to host it; a version devices already run and never download is released with "no_image": true',
      });
    }
    const both = await cloud.admin('PUT', `${other}/2026.06.01`, { no_image: true, url: 'https://fw.test/b.bin', size: 10 });
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({ error: 'invalid_release_metadata', details: { field: 'no_image', also_given: ['url', 'size'] }, message: 'no_image: a release without an image has no url, size; leave out no_image to release the image at its url' });
    expect((await cloud.admin('PUT', `${other}/2026.06.01`, { no_image: false })).status).toBe(400);
    expect(((await (await cloud.admin('GET', other)).json()) as any).versions).toEqual([]);
  });

  it('"no_image": true releases a version devices already run and never download: the check tells them they are up to date', async () => {
    const other = '/admin/firmware/ctl/0x000000AC/ctl';
    const res = await cloud.admin('PUT', `${other}/2025.12.01`, { no_image: true });
    expect(res.status).toBe(201);
    const manifest = (await res.json()) as any;
    expect(manifest).toMatchObject({ version: '2025.12.01', status: 'RELEASED' });
    expect(manifest.url).toBeUndefined();
    const check = await fetch(`${cloud.url}/ota/ctl/0x000000AC/ctl?current_version=2025.12.01`);
    expect(check.status).toBe(200);
    expect(((await check.json()) as any).version).toBe('2025.12.01');
  });

  it.each(['2026.13.01', '2026.00.01', '26.01.01', 'v1'])('refuses the version %s with 400', async (v) => {
    const res = await cloud.admin('PUT', `${track}/${v}`);
    expect(res.status).toBe(400);
    expect((await res.json() as any).error).toBe('invalid_version');
  });

  it('revokes (200, idempotent), 404 for an unknown version, and lists both states', async () => {
    await cloud.admin('PUT', `${track}/2026.02.01`, { no_image: true });
    const r = await cloud.admin('POST', `${track}/2026.02.01/revoke`);
    expect(r.status).toBe(200);
    const body = await r.json() as any;
    expect(body).toMatchObject({ version: '2026.02.01', status: 'REVOKED', revoked_at: expect.any(String) });
    const r2 = await cloud.admin('POST', `${track}/2026.02.01/revoke`);
    expect(await r2.json() as any).toMatchObject({ status: 'REVOKED', revoked_at: body.revoked_at });
    const missing = await cloud.admin('POST', `${track}/2026.09.09/revoke`);
    expect(missing.status).toBe(404);
    expect((await missing.json() as any).error).toBe('release_not_found');
    const list = await (await cloud.admin('GET', track)).json() as any;
    expect(list.versions.map((v: { version: string; status: string }) => `${v.version} ${v.status}`)).toEqual(['2026.01.01 RELEASED', '2026.02.01 REVOKED']);
  });

  it('refuses a JSON body with another content type (415)', async () => {
    const res = await fetch(`${cloud.url}${track}/2026.03.01`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'text/plain' },
      body: 'size=1',
    });
    expect(res.status).toBe(415);
  });

  it('refuses a JSON body over 64 KB (413)', async () => {
    const res = await cloud.admin('PUT', `${track}/2026.03.02`, { url: 'https://x.test/' + 'a'.repeat(70_000) });
    expect(res.status).toBe(413);
    expect((await res.json() as any).error).toBe('payload_too_large');
  });
});
