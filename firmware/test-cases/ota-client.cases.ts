// The device's OTA update check (spec 4.1): it asks GET /ota/{class}/{product_hex}/{application}
// with its current_version, and "treats any other status [than 200] as a hard error, including 404
// and 409": nothing is downloaded, nothing is written to the passive slot, no reboot. A 200 with its
// own version means up to date; an older one is never installed. The cloud here is a small fake, so
// that the cases run on Node and inside XS; the full install path (a real image into the passive
// slot, rollback) is the harness's ota and ota-rollback scenarios.
import type { BodyReader, ClientRequest, ClientResponse } from '../src/hal/network.ts';
import { APP_DESC_IMAGE_OFFSET, encodeAppDescriptor } from '../image/app-desc.ts';
import { concatBytes, hexEncode, utf8Encode } from '../src/core/bytes.ts';
import { writeCloudConfig } from '../src/core/cloud/config.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { checkAndInstall, MAX_RESUMES, OtaError } from '../src/core/ota/client.ts';
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board } from './fixtures.ts';

const CLOUD = 'https://cloud.example';

function rig(answer: (r: ClientRequest) => ClientResponse, o: { configured?: boolean } = {}) {
  const b = bench();
  const seen: ClientRequest[] = [];
  const internet = async (r: ClientRequest): Promise<ClientResponse> => {
    seen.push(r);
    return answer(r);
  };
  const c = board(b, { role: 'controller', internet, firmwareVersion: '2026.03.02' });
  if (o.configured !== false) writeCloudConfig(c.storage, { url: CLOUD });
  return { b, c, seen };
}

const json = (status: number, value: unknown): ClientResponse => ({ status, headers: { 'content-type': 'application/json' }, body: bytesReader(utf8Encode(JSON.stringify(value))) });
const manifest = (version: string) => ({ class: 'ctl-s3', product_hex: '0x00c0ffee', application: 'ctl-s3', version, status: 'RELEASED', url: `${CLOUD}/images/${version}.bin`, size: 4096, sha256: '00'.repeat(32) });

/** Runs the check and returns the OtaError it must end with. */
async function hardError(run: () => Promise<unknown>, what: string): Promise<OtaError> {
  try {
    const result = await run();
    throw new Error(`${what}: expected a hard error, got ${JSON.stringify(result)}`);
  } catch (err) {
    ok(err instanceof OtaError, `${what}: an OtaError (got ${String(err)})`);
    return err as OtaError;
  }
}

export const otaClientCases: TestCase[] = [
  {
    name: 'update check: the request names class, product_hex, application (= class) and current_version',
    async run() {
      const { c, seen } = rig(() => json(200, manifest('2026.03.02')));
      const result = await checkAndInstall(c.hal, { reboot: true });
      equal(JSON.stringify(result), JSON.stringify({ kind: 'up_to_date', version: '2026.03.02' }), 'same version: up to date');
      equal(seen.length, 1, 'one request: nothing downloaded');
      equal(seen[0]!.method, 'GET', 'method');
      equal(seen[0]!.url, `${CLOUD}/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.03.02`, 'URL');
      equal(seen[0]!.headers['x-device-uuid'], c.identity.uuid, 'the board names itself (X-Device-UUID)');
      equal(c.otaImages.length, 0, 'nothing written');
    },
  },
  {
    name: 'update check: a 404 (no RELEASED firmware for the triple) is a hard error: nothing downloaded or written, no reboot',
    async run() {
      const { b, c, seen } = rig(() => json(404, { error: 'firmware_not_found', message: 'no RELEASED firmware' }));
      const err = await hardError(() => checkAndInstall(c.hal, { reboot: true }), '404');
      equal(err.code, 'check_failed', 'code');
      equal(err.status, 404, 'status kept');
      ok(err.message.includes('404'), 'the message names the status');
      equal(seen.length, 1, 'only the check: no image request');
      equal(c.otaImages.length, 0, 'nothing written to the passive slot');
      await b.clock.advance(60_000);
      equal(c.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'update check: 409 (current version REVOKED), 500 and 204 are hard errors too; only 200 is an answer',
    async run() {
      for (const status of [409, 500, 204, 201, 304]) {
        const { b, c, seen } = rig(() => (status === 204 || status === 304 ? { status, headers: {}, body: bytesReader(new Uint8Array(0)) } : json(status, manifest('2026.04.01'))));
        const err = await hardError(() => checkAndInstall(c.hal, { reboot: true }), String(status));
        equal(err.code, 'check_failed', `${status}: code`);
        equal(err.status, status, `${status}: status`);
        equal(seen.length, 1, `${status}: no image request`);
        equal(c.otaImages.length, 0, `${status}: nothing written`);
        await b.clock.advance(60_000);
        equal(c.reboots.length, 0, `${status}: no reboot`);
      }
    },
  },
  {
    name: 'update check over the serial console: "ota check" answers ERR check_failed on a 404 and the board keeps running',
    async run() {
      const { b, c } = rig(() => json(404, { error: 'firmware_not_found' }));
      await c.device.boot();
      const before = c.consoleOut.length;
      c.typeLine('ota check');
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const answer = c.consoleOut.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR '));
      ok(answer !== undefined && answer.startsWith('ERR check_failed '), `ERR check_failed (got ${answer})`);
      ok(answer!.includes('404'), 'the answer names the status');
      await b.clock.advance(60_000);
      equal(c.reboots.length, 0, 'no reboot');
      equal(c.otaImages.length, 0, 'nothing written');
    },
  },
  {
    name: 'update check: an older manifest is refused (never a downgrade), a bad one too; without a cloud configuration nothing is asked',
    async run() {
      const older = rig(() => json(200, manifest('2026.02.09')));
      equal((await hardError(() => checkAndInstall(older.c.hal, { reboot: true }), 'older')).code, 'downgrade', 'older: downgrade');
      equal(older.seen.length, 1, 'older: no image request');
      const bad = rig(() => json(200, { version: '2026.4.1' }));
      equal((await hardError(() => checkAndInstall(bad.c.hal, { reboot: true }), 'bad version')).code, 'bad_manifest', 'bad version');
      const notJson = rig(() => ({ status: 200, headers: {}, body: bytesReader(utf8Encode('<html>')) }));
      equal((await hardError(() => checkAndInstall(notJson.c.hal, { reboot: true }), 'not JSON')).code, 'bad_manifest', 'not JSON');
      const none = rig(() => json(200, manifest('2026.04.01')), { configured: false });
      equal((await hardError(() => checkAndInstall(none.c.hal, { reboot: true }), 'no cloud')).code, 'not_provisioned', 'no cloud configuration');
      equal(none.seen.length, 0, 'no cloud configuration: no request');
    },
  },
  {
    name: 'download cut half way: resumed with Range from the byte reached and If-Range the ETag; the whole image is hashed and installed',
    async run() {
      const image = appImage('2026.04.01', 20_000);
      const { b, c, seen } = rig(imageCloud(image, { cutFirstAt: 9_000 }));
      const result = await withTime(b, checkAndInstall(c.hal, { reboot: false }));
      equal(JSON.stringify(result), JSON.stringify({ kind: 'installed', version: '2026.04.01', size: image.length }), 'installed');
      const downloads = seen.filter((r) => r.url.endsWith('.bin'));
      equal(downloads.length, 2, 'the cut download and its resumption');
      equal(downloads[0]!.headers.range, undefined, 'the first asks for everything');
      equal(downloads[1]!.headers.range, 'bytes=9000-', 'then the rest, from the byte reached');
      equal(downloads[1]!.headers['if-range'], ETAG, 'only from the same image');
      equal(c.otaImages.length, 1, 'one image in the passive slot');
      equal(c.otaImages[0]!.bytes, image.length, 'every byte written once');
      ok(c.otaImages[0]!.finished, 'finished (verified, slot switched)');
    },
  },
  {
    name: 'download cut, then the whole image again (200: the range ignored): starts over and installs; a 206 at another offset is a hard error',
    async run() {
      const image = appImage('2026.04.01', 20_000);
      const again = rig(imageCloud(image, { cutFirstAt: 6_000, ignoreRange: true }));
      await withTime(again.b, checkAndInstall(again.c.hal, { reboot: false }));
      equal(again.c.otaImages.length, 1, 'one image');
      equal(again.c.otaImages[0]!.bytes, image.length, 'written once, from the start');
      ok(again.c.otaImages[0]!.finished, 'installed');
      const wrong = rig(imageCloud(image, { cutFirstAt: 6_000, rangeOffsetBy: 100 }));
      const err = await hardError(() => withTime(wrong.b, checkAndInstall(wrong.c.hal, { reboot: false })), 'wrong offset');
      equal(err.code, 'download_failed', 'download_failed');
      ok(err.message.includes('at byte 6000 answered 206'), `the message names the offset (${err.message})`);
      equal(wrong.c.otaImages.length, 0, 'nothing left in the passive slot');
    },
  },
  {
    name: `download cut more than ${MAX_RESUMES} times: download_failed, nothing written, no reboot`,
    async run() {
      const image = appImage('2026.04.01', 20_000);
      const { b, c, seen } = rig(imageCloud(image, { cutEveryAfter: 1_000 }));
      const err = await hardError(() => withTime(b, checkAndInstall(c.hal, { reboot: true })), 'always cut');
      equal(err.code, 'download_failed', 'download_failed');
      ok(err.message.includes(`gave up after ${MAX_RESUMES} resumes`), err.message);
      equal(seen.filter((r) => r.url.endsWith('.bin')).length, MAX_RESUMES + 1, 'the first try and each resume');
      equal(c.otaImages.length, 0, 'nothing written');
      await b.clock.advance(60_000);
      equal(c.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'the chip refuses the image (its signature, anti-rollback): signature_invalid or secure_version_too_low, no reboot, and one more check naming the running version (a failed install for the cloud)',
    async run() {
      for (const code of ['signature_invalid', 'secure_version_too_low'] as const) {
        const image = appImage('2026.04.01', 8_000);
        const { b, c, seen } = rig(imageCloud(image, {}));
        c.otaRefusal.code = code;
        c.otaRefusal.message = `Secure Boot V2 verification failed (unsigned): ${code}`;
        const err = await hardError(() => withTime(b, checkAndInstall(c.hal, { reboot: true })), code);
        equal(err.code, code, 'the code the chip named');
        ok(err.message.startsWith('refusing 2026.04.01: Secure Boot V2 verification failed (unsigned)'), err.message);
        const checks = seen.filter((r) => r.url.includes('/ota/'));
        equal(checks.length, 2, 'the check, then the report');
        equal(checks[1]!.url, `${CLOUD}/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.03.02`, 'the report names the version still running');
        equal(checks[1]!.headers['x-device-uuid'], c.identity.uuid, 'and the board');
        equal(seen.filter((r) => r.url.endsWith('.bin')).length, 1, 'one download');
        equal(c.otaImages.filter((i) => i.finished).length, 0, 'nothing switched');
        await b.clock.advance(60_000);
        equal(c.reboots.length, 0, 'no reboot');
      }
    },
  },
];

/** An app image as the OTA client reads its head (esp_image_header_t, a segment header, esp_app_desc_t), then filler. */
function appImage(version: string, bytes: number): Uint8Array {
  const head = new Uint8Array(APP_DESC_IMAGE_OFFSET);
  head[0] = 0xe9;
  head[1] = 1;
  const desc = encodeAppDescriptor({ secureVersion: 0, version, projectName: 'esp32-fleet', time: '00:00:00', date: 'Apr  1 2026', idfVersion: 'v5.3', elfSha256: '00'.repeat(32), minEfuseBlockRevision: 0, maxEfuseBlockRevision: 199, mmuPageSizeLog2: 16 });
  const filler = new Uint8Array(bytes - head.length - desc.length);
  for (let i = 0; i < filler.length; i++) filler[i] = (i * 7) & 0xff;
  return concatBytes(concatBytes(head, desc), filler);
}

const ETAG = '"image-etag"';

/** A reader of `bytes` that fails once `failAfter` bytes were read (a connection cut), in 4 KB chunks. */
function cutReader(bytes: Uint8Array, failAfter: number | undefined): BodyReader {
  let at = 0;
  return {
    read: async () => {
      if (failAfter !== undefined && at >= failAfter) throw new Error('connection reset by peer');
      if (at >= bytes.length) return null;
      const end = Math.min(bytes.length, at + 4096, failAfter ?? bytes.length);
      const chunk = bytes.subarray(at, end);
      at = end;
      return chunk;
    },
  };
}

/** The update check and the image, by range, with cuts as asked. */
function imageCloud(image: Uint8Array, o: { cutFirstAt?: number; cutEveryAfter?: number; ignoreRange?: boolean; rangeOffsetBy?: number }) {
  let downloads = 0;
  const sha256 = sha256Hex(image);
  return (r: ClientRequest): ClientResponse => {
    if (r.url.includes('/ota/')) return json(200, { ...manifest('2026.04.01'), size: image.length, sha256 });
    const first = downloads++ === 0;
    const cut = first ? (o.cutFirstAt ?? o.cutEveryAfter) : o.cutEveryAfter;
    const m = /^bytes=(\d+)-$/.exec(r.headers.range ?? '');
    if (!m || o.ignoreRange || r.headers['if-range'] !== ETAG) {
      return { status: 200, headers: { etag: ETAG, 'content-length': String(image.length) }, body: cutReader(image, cut) };
    }
    const from = Number(m[1]) + (o.rangeOffsetBy ?? 0);
    const rest = image.subarray(from);
    return { status: 206, headers: { etag: ETAG, 'content-range': `bytes ${from}-${image.length - 1}/${image.length}` }, body: cutReader(rest, cut) };
  };
}

let shaBoard: ReturnType<typeof rig> | undefined;
function sha256Hex(bytes: Uint8Array): string {
  shaBoard ??= rig(() => json(404, {}));
  return hexEncode(shaBoard.c.hal.crypto.sha256().update(bytes).digest());
}

/** Runs `work` while the bench's virtual clock moves on (the resume back-off waits on the board's timers). */
async function withTime<T>(b: ReturnType<typeof rig>['b'], work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await b.clock.advance(500);
  return settled;
}
