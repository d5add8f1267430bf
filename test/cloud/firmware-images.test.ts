// Images hosted by the cloud (docs/firmware-images.md): a release from an uploaded image passes the
// release checks first (app image, chip, version, project, SHA-256, not older than a released version,
// the OTA slot's size) and stores nothing when one fails or the upload is cut; the image is then served
// at the manifest's url with its SHA-256 as ETag and byte ranges (206, If-Range, 416).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_IMAGE_BYTES } from '../../cloud/ota/release-checks.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { appImage, sha256Hex } from '../helpers/images.ts';
import { rawRequest } from '../helpers/raw-http.ts';

let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud();
});
afterAll(() => cloud.close());

const TRACK = { class: 'ctl-s3', productHex: '0x00c0ffee', application: 'ctl-s3' };
const trackPath = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';

/** admin() sends JSON; an image goes as raw bytes. */
async function put(version: string, body: Buffer, query = '', track = trackPath) {
  const res = await fetch(`${cloud.url}${track}/${version}/image${query}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' },
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function nothingStored(version: string) {
  expect((await cloud.store.listReleases(TRACK)).map((r) => r.version)).not.toContain(version);
  expect(await cloud.store.getImage(TRACK, version)).toBeNull();
}

describe('release checks: refused with both values named, nothing stored', () => {
  it('an image whose app descriptor says another version (the issue: 2031.11.01 carrying 2031.10.01)', async () => {
    const r = await put('2031.11.01', appImage('2031.10.01'));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'image_version_mismatch', details: { release_version: '2031.11.01', image_version: '2031.10.01' } });
    expect(r.body.message).toMatch(/2031\.10\.01.*2031\.11\.01/);
    await nothingStored('2031.11.01');
  });

  it('an image for another chip', async () => {
    const r = await put('2026.01.01', appImage('2026.01.01', { chip: 'esp32c3' }));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'image_chip_mismatch', details: { release_chip: 'ESP32-S3', image_chip: 'ESP32-C3' } });
    await nothingStored('2026.01.01');
  });

  it('bytes that are not an app image, and an image cut short', async () => {
    const junk = await put('2026.01.01', Buffer.alloc(4096, 0xa5));
    expect(junk.status).toBe(400);
    expect(junk.body).toMatchObject({ error: 'invalid_image', details: { problems: [expect.stringMatching(/invalid magic byte/)] } });
    const image = appImage('2026.01.01');
    const cut = await put('2026.01.01', image.subarray(0, image.length - 100));
    expect(cut.status).toBe(400);
    expect(cut.body.error).toBe('invalid_image');
    await nothingStored('2026.01.01');
  });

  it('an image whose bytes do not hash to the SHA-256 it carries (corrupt), or to the one the uploader declared', async () => {
    const image = appImage('2026.01.01');
    const corrupt = Buffer.from(image);
    corrupt[600] = corrupt[600]! ^ 0xff; // in the first segment's data, past the descriptor
    const r = await put('2026.01.01', corrupt);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'image_sha256_mismatch', details: { image_carries: sha256Hex(image.subarray(0, image.length - 32)), computed: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    const declared = await put('2026.01.01', image, `?sha256=${'0'.repeat(64)}`);
    expect(declared.status).toBe(400);
    expect(declared.body).toMatchObject({ error: 'image_sha256_mismatch', details: { declared: '0'.repeat(64), computed: sha256Hex(image) } });
    await nothingStored('2026.01.01');
  });

  it('an image larger than the OTA slot: 413 on the declared length before a byte of the body is read', async () => {
    const token = await cloud.token();
    const { answer, socket } = rawRequest(
      cloud.url,
      `PUT ${trackPath}/2026.01.01/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${MAX_IMAGE_BYTES + 1}\r\n\r\n`,
    );
    const a = await answer;
    socket.destroy();
    expect(a?.status).toBe(413);
    expect(a?.json).toMatchObject({ error: 'image_too_large', details: { limit_bytes: 3 * 1024 * 1024, content_length: MAX_IMAGE_BYTES + 1 } });
    // With Expect: 100-continue, no 100 is sent: the client never sends the body.
    const expecting = rawRequest(
      cloud.url,
      `PUT ${trackPath}/2026.01.01/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${MAX_IMAGE_BYTES + 1}\r\nExpect: 100-continue\r\n\r\n`,
    );
    const b = await expecting.answer;
    expecting.socket.destroy();
    expect(b?.status).toBe(413);
    expect(b?.json.error).toBe('image_too_large');
    await nothingStored('2026.01.01');
  });

  it('an image larger than the OTA slot sent chunked (no length declared): 413 once the limit is passed', async () => {
    const big = Buffer.alloc(MAX_IMAGE_BYTES + 64 * 1024, 1);
    const stream = new ReadableStream({
      start(c) {
        for (let at = 0; at < big.length; at += 256 * 1024) c.enqueue(big.subarray(at, at + 256 * 1024));
        c.close();
      },
    });
    const res = await fetch(`${cloud.url}${trackPath}/2026.01.01/image`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' },
      body: stream,
      duplex: 'half',
    } as RequestInit).catch((err: unknown) => err);
    // The cloud answers 413 and closes; a client still sending may see the answer or a reset.
    if (res instanceof Response) {
      expect(res.status).toBe(413);
      expect(((await res.json()) as any).error).toBe('image_too_large');
    }
    await nothingStored('2026.01.01');
  });

  it('an upload cut half way stores nothing', async () => {
    const image = appImage('2026.01.20', { bytes: 200_000 });
    const token = await cloud.token();
    const { socket } = rawRequest(
      cloud.url,
      Buffer.concat([
        Buffer.from(`PUT ${trackPath}/2026.01.20/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${image.length}\r\n\r\n`),
        image.subarray(0, image.length >> 1),
      ]),
    );
    await new Promise((r) => setTimeout(r, 200));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    await nothingStored('2026.01.20');
    // The cloud is not left waiting on the cut upload: the same version uploads whole now.
    const whole = await put('2026.01.20', image);
    expect(whole.status).toBe(201);
  });

  it('a wrong Content-Type or query parameter is a 400', async () => {
    const json = await cloud.admin('PUT', `${trackPath}/2026.01.01/image`, { not: 'an image' });
    expect(json.status).toBe(400);
    expect(((await json.json()) as any).error).toBe('invalid_content_type');
    const chip = await put('2026.01.01', appImage('2026.01.01'), '?chip=esp8266');
    expect(chip.status).toBe(400);
    expect(chip.body).toMatchObject({ error: 'invalid_query', details: { field: 'chip', value: 'esp8266' } });
    const unknown = await put('2026.01.01', appImage('2026.01.01'), '?colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'invalid_query', details: { unknown_keys: ['colour'] } });
    await nothingStored('2026.01.01');
  });
});

describe('a hosted release', () => {
  let image: Buffer;
  let manifest: any;

  beforeAll(async () => {
    image = appImage('2026.02.01', { bytes: 300_000 });
    const r = await put('2026.02.01', image, `?sha256=${sha256Hex(image)}`);
    expect(r.status).toBe(201);
    manifest = r.body;
  });

  it('has a manifest whose url is this cloud, with the size and SHA-256 of the image', async () => {
    expect(manifest).toMatchObject({ version: '2026.02.01', status: 'RELEASED', size: image.length, sha256: sha256Hex(image), url: `${cloud.url}/images/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01.bin` });
    const check = (await (await fetch(`${cloud.url}/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.01.25`)).json()) as any;
    // The upload's answer is the manifest devices get, and which key signed the image (none here).
    const { signed_by, ...asManifest } = manifest;
    expect(signed_by).toBeNull();
    expect(check).toEqual(asManifest);
    const listed = (await cloud.adminJson('GET', trackPath)).body.versions.find((v: any) => v.version === '2026.02.01');
    expect(listed).toMatchObject({ version: '2026.02.01', hosted: true, chip: 'esp32s3', project: 'esp32-fleet', rollout: null });
  });

  it('is served whole with its ETag, and by HEAD without a body', async () => {
    const res = await fetch(manifest.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${sha256Hex(image)}"`);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await res.arrayBuffer()).equals(image)).toBe(true);
    const head = await fetch(manifest.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(image.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const cached = await fetch(manifest.url, { headers: { 'if-none-match': `"${sha256Hex(image)}"` } });
    expect(cached.status).toBe(304);
  });

  it('serves one byte range (206), the rest of a cut download, and a suffix', async () => {
    const mid = await fetch(manifest.url, { headers: { range: 'bytes=1000-1999' } });
    expect(mid.status).toBe(206);
    expect(mid.headers.get('content-range')).toBe(`bytes 1000-1999/${image.length}`);
    expect(Buffer.from(await mid.arrayBuffer()).equals(image.subarray(1000, 2000))).toBe(true);
    const rest = await fetch(manifest.url, { headers: { range: 'bytes=123457-', 'if-range': `"${sha256Hex(image)}"` } });
    expect(rest.status).toBe(206);
    expect(Buffer.from(await rest.arrayBuffer()).equals(image.subarray(123457))).toBe(true);
    const tail = await fetch(manifest.url, { headers: { range: 'bytes=-32' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(image.subarray(image.length - 32))).toBe(true);
    const past = await fetch(manifest.url, { headers: { range: `bytes=0-${image.length + 500}` } });
    expect(past.status).toBe(206);
    expect(past.headers.get('content-range')).toBe(`bytes 0-${image.length - 1}/${image.length}`);
  });

  it('sends the whole image when If-Range names another image, or for several ranges', async () => {
    const other = await fetch(manifest.url, { headers: { range: 'bytes=100-', 'if-range': `"${'0'.repeat(64)}"` } });
    expect(other.status).toBe(200);
    expect(Buffer.from(await other.arrayBuffer()).equals(image)).toBe(true);
    const several = await fetch(manifest.url, { headers: { range: 'bytes=0-9, 20-29' } });
    expect(several.status).toBe(200);
    expect((await several.arrayBuffer()).byteLength).toBe(image.length);
  });

  it('answers 416 with Content-Range for a range outside the image', async () => {
    for (const range of [`bytes=${image.length}-`, `bytes=${image.length + 10}-${image.length + 20}`, 'bytes=-0']) {
      const res = await fetch(manifest.url, { headers: { range } });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${image.length}`);
      expect((await res.json()) as any).toMatchObject({ error: 'range_not_satisfiable', details: { size: image.length } });
    }
  });

  it('refuses the same version again (409) and an older one than released (409), storing nothing', async () => {
    const again = await put('2026.02.01', appImage('2026.02.01'));
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('release_exists');
    expect((await cloud.store.getImage(TRACK, '2026.02.01'))?.bytes.equals(image)).toBe(true);
    const older = await put('2026.01.15', appImage('2026.01.15'));
    expect(older.status).toBe(409);
    expect(older.body).toMatchObject({ error: 'version_older_than_released', details: { version: '2026.01.15', newest_released: '2026.02.01' } });
    await nothingStored('2026.01.15');
  });

  it("holds the track's images to one project: another project is refused with both named", async () => {
    const r = await put('2026.03.01', appImage('2026.03.01', { project: 'someone-else' }));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'image_project_mismatch', details: { release_project: 'esp32-fleet', image_project: 'someone-else' } });
    await nothingStored('2026.03.01');
  });

  it('404 for a version the cloud hosts no image of, and once the release is revoked', async () => {
    expect((await fetch(`${cloud.url}/images/ctl-s3/0x00c0ffee/ctl-s3/2030.01.01.bin`)).status).toBe(404);
    await cloud.admin('PUT', `${trackPath}/2026.04.01`, { url: 'https://cdn.example/fw.bin', size: 10, sha256: 'ab'.repeat(32) });
    const elsewhere = await fetch(`${cloud.url}/images/ctl-s3/0x00c0ffee/ctl-s3/2026.04.01.bin`);
    expect(elsewhere.status).toBe(404);
    expect(((await elsewhere.json()) as any).error).toBe('image_not_found');
    expect((await cloud.admin('POST', `${trackPath}/2026.02.01/revoke`)).status).toBe(200);
    const revoked = await fetch(manifest.url);
    expect(revoked.status).toBe(404);
    expect((await revoked.json()) as any).toMatchObject({ error: 'image_not_found', details: { status: 'REVOKED' } });
  });
});
