// Signed images on the cloud (docs/secure-boot.md, The cloud), on SQLite and on a real PostgreSQL
// server, over real HTTP: a track's signing setting (GET/PUT, refused with why when bad, audited);
// with it required, an image upload is refused unless a Secure Boot v2 block by a trusted key verifies
// (unsigned, damaged, tampered, untrusted, bad signature: each its own catalog error naming the keys),
// storing nothing; an accepted one records the block and key, shown in the listing. With signing off
// a signed image is accepted and its key named. Keys are made by openssl and by node; images signed
// with signImage.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { putU32 } from '../../firmware/image/bytes.ts';
import { romCrc32Le } from '../../firmware/image/otadata.ts';
import { padToSector, publicKeyDigest, SIG_SECTOR_BYTES, signatureSectorOffset, signImage } from '../../firmware/image/secure-boot.ts';
import { MAX_IMAGE_BYTES } from '../../cloud/ota/release-checks.ts';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore } from '../../cloud/store/types.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { appImage, sha256Hex } from '../helpers/images.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const TRACK = { class: 'ctl-s3', productHex: '0x00c0ffee', application: 'ctl-s3' };
const trackPath = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';
const signingPath = '/admin/tracks/ctl-s3/0x00c0ffee/ctl-s3/signing';

let dir: string;
/** Made by openssl (genrsa 3072). */
let keyA: KeyObject;
/** Made by node. */
let keyB: KeyObject;
let digestA: string;
let digestB: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'track-signing-'));
  execFileSync('openssl', ['genrsa', '-out', join(dir, 'a.pem'), '3072'], { stdio: 'ignore' });
  keyA = createPrivateKey(readFileSync(join(dir, 'a.pem')));
  keyB = generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey;
  digestA = publicKeyDigest(keyA).toString('hex');
  digestB = publicKeyDigest(keyB).toString('hex');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The signature sector's first block of a signed image, changed by `edit`, its CRC recomputed when asked. */
function editBlock(signed: Buffer, edit: (block: Buffer) => void, o: { fixCrc: boolean }): Buffer {
  const out = Buffer.from(signed);
  const block = out.subarray(out.length - SIG_SECTOR_BYTES, out.length - SIG_SECTOR_BYTES + 1216);
  edit(block);
  if (o.fixCrc) putU32(block, 1196, romCrc32Le(0, block.subarray(0, 1196)));
  return out;
}

describe.each([
  ['SQLite', async () => new SqliteStore(':memory:') as CloudStore],
  ['PostgreSQL', async () => (await PostgresStore.connect(await freshDatabase())) as CloudStore],
])('%s: signed images', (_name, open) => {
  let store: CloudStore;
  let cloud: TestCloud;
  beforeAll(async () => {
    store = await open();
    cloud = await startTestCloud({ store });
  });
  afterAll(async () => {
    await cloud.close();
    await store.close();
  });

  async function upload(version: string, body: Buffer) {
    const res = await fetch(`${cloud.url}${trackPath}/${version}/image`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function nothingStored(version: string) {
    expect((await store.listReleases(TRACK)).map((r) => r.version)).not.toContain(version);
    expect(await store.getImage(TRACK, version)).toBeNull();
  }

  const listed = async (version: string) => (await cloud.adminJson('GET', trackPath)).body.versions.find((v: any) => v.version === version);

  it('a track never set has signing off and no keys', async () => {
    const r = await cloud.adminJson('GET', signingPath);
    expect(r).toEqual({ status: 200, body: { class: 'ctl-s3', product_hex: '0x00c0ffee', application: 'ctl-s3', required: false, keys: [], updated_at: null } });
    const bad = await cloud.adminJson('GET', '/admin/tracks/ctl-s3/0xZZ/ctl-s3/signing');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_product_hex');
  });

  it('signing off: a signed image is accepted and its key named; an unsigned one as before', async () => {
    const image = appImage('2026.01.01');
    const signed = signImage(image, [keyA]);
    expect(signed.length).toBe(signatureSectorOffset(image.length) + SIG_SECTOR_BYTES);
    const r = await upload('2026.01.01', signed);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ version: '2026.01.01', size: signed.length, sha256: sha256Hex(signed), signed_by: { block: 0, key_digest: digestA } });
    // The bytes hosted are the signed file, signature sector included (the board's OTA client checks it).
    expect((await store.getImage(TRACK, '2026.01.01'))?.bytes.equals(signed)).toBe(true);
    const served = await fetch(r.body.url);
    expect(Buffer.from(await served.arrayBuffer()).equals(signed)).toBe(true);
    expect(await listed('2026.01.01')).toMatchObject({ hosted: true, signed_by: { block: 0, key_digest: digestA } });

    const plain = await upload('2026.01.02', appImage('2026.01.02'));
    expect(plain.status).toBe(201);
    expect(plain.body.signed_by).toBeNull();
    expect((await listed('2026.01.02')).signed_by).toBeNull();
    // A release from metadata has no signer either.
    expect((await cloud.admin('PUT', `${trackPath}/2026.01.03`, { url: 'https://cdn.example/fw.bin' })).status).toBe(201);
    expect((await listed('2026.01.03')).signed_by).toBeNull();
  });

  it('a bad setting is a 400 saying why, and changes nothing', async () => {
    const bodies: [unknown, RegExp][] = [
      [{ required: true }, /keys: expected/],
      [{ keys: [] }, /required: expected/],
      [{ required: 'yes', keys: [{ digest: digestA }] }, /required: expected true or false/],
      [{ required: true, keys: [{ digest: 'abc' }] }, /keys\[0\]\.digest: expected 64 hexadecimal digits/],
      [{ required: true, keys: [{ digest: digestA, colour: 'red' }] }, /Unknown key: keys\[0\]\.colour/],
      [{ required: true, keys: [{ digest: digestA, label: 'a\u0007b' }] }, /keys\[0\]\.label/],
      [{ required: true, keys: [{ digest: digestA }, { digest: digestA.toUpperCase() }] }, /listed twice/],
      [{ required: true, keys: [] }, /would refuse every image/],
      [{ required: false, keys: Array.from({ length: 17 }, (_, i) => ({ digest: i.toString(16).padStart(64, '0') })) }, /at most 16 items/],
      [{ required: true, keys: [{ digest: digestA }], extra: 1 }, /Unknown key: extra/],
    ];
    for (const [body, why] of bodies) {
      const r = await cloud.adminJson('PUT', signingPath, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe('invalid_track_signing');
      expect(r.body.message).toMatch(why);
    }
    const text = await cloud.admin('PUT', signingPath, undefined, { 'content-type': 'text/plain' });
    expect(text.status).toBe(400);
    const form = await fetch(`${cloud.url}${signingPath}`, { method: 'PUT', headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'text/plain' }, body: 'required=true' });
    expect(form.status).toBe(415);
    expect((await cloud.adminJson('GET', signingPath)).body).toMatchObject({ required: false, keys: [], updated_at: null });
    expect(await store.getTrackSigning(TRACK)).toBeNull();
  });

  it('a super user sets it (digests lower-cased, labels kept); the change is audited; others may not', async () => {
    const r = await cloud.adminJson('PUT', signingPath, { required: true, keys: [{ digest: digestB.toUpperCase(), label: 'release key B' }] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ required: true, keys: [{ digest: digestB, label: 'release key B' }], updated_at: expect.any(String) });
    expect((await cloud.adminJson('GET', signingPath)).body).toEqual(r.body);
    await vi.waitFor(async () => {
      const audit = (await cloud.adminJson('GET', '/admin/audit')).body.entries as any[];
      expect(audit.find((e) => e.action === 'setTrackSigning')).toMatchObject({ actor: 'test', status: 200, path: signingPath, details: { required: true, keys: [digestB] } });
    });
    const notSuper = await fetch(`${cloud.url}${signingPath}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await cloud.token(['operators'])}`, 'content-type': 'application/json' },
      body: JSON.stringify({ required: false, keys: [] }),
    });
    expect(notSuper.status).toBe(403);
    expect((await fetch(`${cloud.url}${signingPath}`)).status).toBe(401);
    expect((await store.getTrackSigning(TRACK))?.required).toBe(true);
  });

  describe('signing required: refused with its own error naming the keys, nothing stored', () => {
    const version = '2026.02.01';

    it('an unsigned image', async () => {
      const r = await upload(version, appImage(version));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'image_not_signed', details: { keys_found: [], keys_trusted: [digestB], sector_offset: expect.any(Number) } });
      expect(r.body.message).toContain('Keys found: none');
      expect(r.body.message).toContain(digestB);
      // A few bytes after the image are not a sector either.
      const tail = await upload(version, Buffer.concat([appImage(version), Buffer.alloc(100, 0xff)]));
      expect(tail.body).toMatchObject({ error: 'image_not_signed', details: { reason: expect.stringMatching(/100 bytes follow the \d+-byte image/) } });
      await nothingStored(version);
    });

    it('an image signed by a key the track does not trust', async () => {
      const r = await upload(version, signImage(appImage(version), [keyA]));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'image_signer_not_trusted', details: { keys_found: [digestA], keys_trusted: [digestB] } });
      expect(r.body.message).toContain(`Keys found: ${digestA}`);
      await nothingStored(version);
    });

    it('a damaged signature block (its CRC no longer matches)', async () => {
      const damaged = editBlock(signImage(appImage(version), [keyB]), (b) => (b[100] = b[100]! ^ 0x01), { fixCrc: false });
      const r = await upload(version, damaged);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'image_signature_damaged', details: { reason: expect.stringMatching(/signature block 0 is damaged: CRC32/) } });
      await nothingStored(version);
    });

    it('a tampered image: another valid app image of the same version behind a signature sector made for the first', async () => {
      const original = appImage(version, { bytes: 8000 });
      const other = appImage(version, { bytes: 8192 });
      expect(signatureSectorOffset(original.length)).toBe(signatureSectorOffset(other.length));
      const signed = signImage(original, [keyB]);
      const swapped = Buffer.concat([padToSector(other), signed.subarray(signed.length - SIG_SECTOR_BYTES)]);
      const r = await upload(version, swapped);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'image_tampered', details: { keys_found: [digestB] } });
      expect(r.body.message).toMatch(/changed after it was signed.*image digest [0-9a-f]{64} is not the signed [0-9a-f]{64}/);
      // The padding before the sector is signed too.
      const padded = Buffer.from(signed);
      padded[signatureSectorOffset(original.length) - 1] = 0x00;
      expect((await upload(version, padded)).body.error).toBe('image_tampered');
      await nothingStored(version);
    });

    it('a block by a trusted key whose RSA-PSS signature does not verify (CRC made right again)', async () => {
      // Byte 852 is in the RSA-PSS signature (bytes 812 to 1195 of the block).
      const forged = editBlock(signImage(appImage(version), [keyB]), (b) => (b[852] = b[852]! ^ 0x80), { fixCrc: true });
      const r = await upload(version, forged);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'image_signature_invalid', details: { keys_found: [digestB] } });
      await nothingStored(version);
    });

    it('a release from metadata only: 409, the cloud cannot check an image it does not see', async () => {
      const r = await cloud.adminJson('PUT', `${trackPath}/${version}`, { url: 'https://cdn.example/fw.bin', size: 10, sha256: 'ab'.repeat(32) });
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ error: 'signing_requires_image', details: { version } });
      await nothingStored(version);
    });

    it('accepted when any block is by a trusted key: the block and key are recorded and listed with its label', async () => {
      const signed = signImage(appImage(version), [keyA, keyB]);
      const r = await upload(version, signed);
      expect(r.status).toBe(201);
      expect(r.body.signed_by).toEqual({ block: 1, key_digest: digestB, key_label: 'release key B' });
      expect(await listed(version)).toMatchObject({ version, hosted: true, size: signed.length, signed_by: { block: 1, key_digest: digestB, key_label: 'release key B' } });
      expect((await store.listReleases(TRACK)).find((x) => x.version === version)?.signedBy).toEqual({ block: 1, keyDigest: digestB });
    });

    it('the size limit counts the signature sector: a signed image filling the OTA slot exactly is accepted, one past it refused', async () => {
      const fits = signImage(appImage('2026.02.02', { bytes: MAX_IMAGE_BYTES - 8192 }), [keyB]);
      expect(fits.length).toBe(MAX_IMAGE_BYTES);
      const r = await upload('2026.02.02', fits);
      expect(r.status).toBe(201);
      expect(r.body.signed_by).toMatchObject({ key_digest: digestB });
      const unsignedFits = appImage('2026.02.03', { bytes: MAX_IMAGE_BYTES - 3000 });
      expect(unsignedFits.length).toBeLessThanOrEqual(MAX_IMAGE_BYTES);
      const over = signImage(unsignedFits, [keyB]);
      expect(over.length).toBeGreaterThan(MAX_IMAGE_BYTES);
      // On its own socket: the cloud answers 413 on the declared length and closes the connection.
      const { answer, socket } = rawRequest(
        cloud.url,
        `PUT ${trackPath}/2026.02.03/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${await cloud.token()}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${over.length}\r\n\r\n`,
      );
      const refused = await answer;
      socket.destroy();
      expect(refused?.status).toBe(413);
      expect(refused?.json).toMatchObject({ error: 'image_too_large', details: { limit_bytes: MAX_IMAGE_BYTES, content_length: over.length } });
      await nothingStored('2026.02.03');
    });
  });

  it('signing off again: unsigned images are accepted; the keys are kept', async () => {
    const off = await cloud.adminJson('PUT', signingPath, { required: false, keys: [{ digest: digestB, label: 'release key B' }] });
    expect(off.status).toBe(200);
    const r = await upload('2026.03.01', appImage('2026.03.01'));
    expect(r.status).toBe(201);
    expect(r.body.signed_by).toBeNull();
    // A signed image whose block is damaged is not refused with signing off, and names no key.
    const damaged = await upload('2026.03.02', editBlock(signImage(appImage('2026.03.02'), [keyB]), (b) => (b[100] = b[100]! ^ 1), { fixCrc: false }));
    expect(damaged.status).toBe(201);
    expect(damaged.body.signed_by).toBeNull();
  });
});
