// Cloud backup from the device (spec 4.2 /api/cloud-backup, 5, 7; DESIGN.md section 3): the
// visual-token on every route, the signed request the device sends (checked against its public key),
// the blob only its own fuse key opens, and every cloud answer mapped to the device's status. The
// cloud here is a small in-process fake, so that the same cases run on Node and inside XS; the real
// cloud is exercised by test/firmware/sdk-board.test.ts.
import { p256 } from '@noble/curves/nist.js';
import type { ClientRequest, ClientResponse } from '../src/hal/network.ts';
import { base64Decode, concatBytes, hexEncode, utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { writeCloudConfig } from '../src/core/cloud/config.ts';
import { deriveBackupKey } from '../src/core/crypto/device-keys.ts';
import { decryptFfce, encryptFfce } from '../src/core/crypto/ffce.ts';
import { unquoteEtag } from '../src/core/http/etag.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { deepEqual, equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, readAll, type TestBoard } from './fixtures.ts';

const CLOUD = 'https://cloud.example';
const BACKUP = '{"outputs":[{"id":1,"name":"Deck light"}],"mqtt":{"host":"broker.local"}}';
const sha = (b: Uint8Array) => hexEncode(createPureJsCrypto(seededRandom(1)).sha256().update(b).digest());

/** Bytes as one char each, to look for ASCII text in a blob. */
const latin1 = (b: Uint8Array) => Array.from(b, (x) => String.fromCharCode(x)).join('');

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A fake cloud: answers with `answer(seen)`, or stores/serves one blob per device. */
function fakeCloud() {
  const seen: Seen[] = [];
  /** The board's health reports (core/health): taken, and kept apart from the backup requests. */
  const health: Seen[] = [];
  const blobs = new Map<string, { blob: Uint8Array; etag: string | null }>();
  let answer: ((s: Seen) => ClientResponse | Promise<ClientResponse>) | null = null;
  let sendEtag = true;
  const json = (status: number, value: unknown): ClientResponse => ({ status, headers: { 'content-type': 'application/json' }, body: bytesReader(utf8Encode(JSON.stringify(value))) });
  const internet = async (r: ClientRequest): Promise<ClientResponse> => {
    const body = r.body === undefined ? new Uint8Array(0) : await readAll(r.body);
    if (r.bodyLength !== undefined) equal(body.length, r.bodyLength, 'the declared body length is the length sent');
    const s: Seen = { method: r.method, url: r.url, headers: r.headers, body };
    if (/\/health$/.test(r.url)) {
      health.push(s);
      return json(201, { seq: 0 });
    }
    seen.push(s);
    if (answer) return answer(s);
    const uuid = decodeURIComponent(/\/devices\/([^/]+)\/backup$/.exec(r.url)?.[1] ?? '');
    const stored = blobs.get(uuid);
    if (r.method === 'POST') {
      const etag = unquoteEtag(r.headers.etag);
      if (etag && stored?.etag === etag && unquoteEtag(r.headers['if-none-match']) === etag) return { status: 304, headers: {}, body: bytesReader(new Uint8Array(0)) };
      blobs.set(uuid, { blob: body, etag });
      return json(200, { message: 'Backup stored', last_backup_date: '2026-11-21T12:00:00.000Z' });
    }
    if (!stored) return json(404, { error: 'backup_not_found' });
    if (r.method === 'DELETE') {
      blobs.delete(uuid);
      return { status: 204, headers: {}, body: bytesReader(new Uint8Array(0)) };
    }
    return { status: 200, headers: { 'content-type': 'application/octet-stream', ...(sendEtag && stored.etag ? { etag: `"${stored.etag}"` } : {}) }, body: bytesReader(stored.blob, 100) };
  };
  return {
    seen,
    health,
    blobs,
    internet,
    json,
    answerWith(fn: typeof answer) {
      answer = fn;
    },
    withoutEtag() {
      sendEtag = false;
    },
  };
}

async function rig(o: { fuseKeyHex?: string; uuid?: string; cloud?: ReturnType<typeof fakeCloud>; backup?: string | null; configured?: boolean } = {}) {
  const b = bench();
  const cloud = o.cloud ?? fakeCloud();
  const c = board(b, { role: 'controller', internet: cloud.internet, ...(o.fuseKeyHex ? { fuseKeyHex: o.fuseKeyHex } : {}), ...(o.uuid ? { uuid: o.uuid } : {}) });
  await c.device.boot();
  const auth = await login(c);
  if (o.configured !== false) writeCloudConfig(c.storage, { url: CLOUD });
  if (o.backup !== null) equal((await call(c, 'PUT', '/backup', { headers: auth, body: o.backup ?? BACKUP })).status, 200, 'local backup');
  return { b, c, auth, cloud };
}

/** The device's identity public key (uncompressed point), from the PEM it gives for enrollment. */
function publicKey(c: TestBoard): Uint8Array {
  const b64 = c.device.publicKeyPem().replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  return base64Decode(b64).slice(-65);
}

function backupKey(c: TestBoard): Uint8Array {
  return deriveBackupKey((m) => c.hal.fuse.hmac(m));
}

/** Spec 4.1 / 5.1: the four headers, the nonce of 32 bytes, the ISO UTC time, the signature by the device's key. */
function checkSigned(c: TestBoard, s: Seen, what: string): void {
  equal(s.url, `${CLOUD}/devices/${encodeURIComponent(c.identity.uuid)}/backup`, `${what}: URL`);
  equal(s.headers['x-device-uuid'], c.identity.uuid, `${what}: X-Device-UUID`);
  const nonce = base64Decode(s.headers['x-device-nonce']!);
  equal(nonce.length, 32, `${what}: a 32-byte nonce`);
  equal(s.headers['x-device-timestamp'], new Date(c.hal.clock.now()).toISOString(), `${what}: the device's clock, ISO 8601 UTC`);
  const signature = base64Decode(s.headers['x-device-signature']!);
  const message = concatBytes(nonce, utf8Encode(s.headers['x-device-timestamp']!));
  ok(p256.verify(signature, message, publicKey(c), { format: 'der' }), `${what}: the signature verifies with the device's public key`);
  ok(!p256.verify(signature, concatBytes(utf8Encode(s.headers['x-device-timestamp']!), nonce), publicKey(c), { format: 'der' }), `${what}: over nonce then timestamp, not the other order`);
}

export const cloudBackupCases: TestCase[] = [
  {
    name: 'every /api/cloud-backup route needs a valid visual-token (401), and without one nothing reaches the cloud',
    async run() {
      const { c, auth, cloud } = await rig();
      for (const method of ['POST', 'GET', 'DELETE']) {
        const refused: Record<string, string>[] = [{}, { 'visual-token': 'not-a-token' }, { 'visual-token': auth['visual-token']!.slice(0, -1) }];
        for (const headers of refused) {
          const r = await call(c, method, '/api/cloud-backup', { headers });
          equal(r.status, 401, `${method} with ${JSON.stringify(headers)}`);
        }
      }
      equal(cloud.seen.length, 0, 'no request went to the cloud');
      equal((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).status, 200, 'with the token');
      equal(cloud.seen.length, 1, 'one request');
    },
  },
  {
    name: 'POST /api/cloud-backup: a signed upload of an FFCE blob only this board decrypts, ETag and If-None-Match set; unchanged is 304 "unchanged"',
    async run() {
      const { c, auth, cloud } = await rig();
      const r = await call(c, 'POST', '/api/cloud-backup', { headers: auth });
      equal(r.status, 200, 'push');
      deepEqual(r.json, { result: 'stored', etag: sha(utf8Encode(BACKUP)), last_backup_date: '2026-11-21T12:00:00.000Z' }, 'the answer');
      const s = cloud.seen[0]!;
      equal(s.method, 'POST', 'method');
      checkSigned(c, s, 'push');
      equal(s.headers['content-type'], 'application/octet-stream', 'content type');
      equal(s.headers.etag, `"${sha(utf8Encode(BACKUP))}"`, 'ETag: the plaintext SHA-256');
      equal(s.headers['if-none-match'], `"${sha(utf8Encode(BACKUP))}"`, 'If-None-Match: the same');
      equal(utf8Decode(s.body.slice(0, 4)), 'FFCE', 'the magic');
      equal(s.body.length, utf8Encode(BACKUP).length + 32, 'magic + IV + ciphertext + tag');
      ok(!latin1(s.body).includes('Deck light'), 'no plaintext on the wire');
      equal(utf8Decode(decryptFfce(c.hal.crypto, backupKey(c), s.body)), BACKUP, 'decrypts with the key derived from this fuse');
      let opened = true;
      try {
        decryptFfce(c.hal.crypto, new Uint8Array(32), s.body);
      } catch {
        opened = false;
      }
      ok(!opened, 'not with an all-zero key');
      // Each request is signed afresh: another nonce.
      const again = await call(c, 'POST', '/api/cloud-backup', { headers: auth });
      equal(again.status, 200, 'second push');
      deepEqual(again.json, { result: 'unchanged', etag: sha(utf8Encode(BACKUP)) }, 'the cloud answered 304');
      ok(cloud.seen[1]!.headers['x-device-nonce'] !== s.headers['x-device-nonce'], 'a new nonce');
      checkSigned(c, cloud.seen[1]!, 'second push');
    },
  },
  {
    name: 'POST /api/cloud-backup: a 204 from the cloud is success too; a 200 without a date still succeeds',
    async run() {
      const { c, auth, cloud } = await rig();
      cloud.answerWith(() => ({ status: 204, headers: {}, body: bytesReader(new Uint8Array(0)) }));
      const r = await call(c, 'POST', '/api/cloud-backup', { headers: auth });
      equal(r.status, 200, '204 is success');
      deepEqual(r.json, { result: 'stored', etag: sha(utf8Encode(BACKUP)) }, 'stored, no date');
      cloud.answerWith(() => cloud.json(200, { message: 'Backup stored' }));
      deepEqual((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).json, { result: 'stored', etag: sha(utf8Encode(BACKUP)) }, '200 without a date');
      cloud.answerWith(() => ({ status: 200, headers: {}, body: bytesReader(utf8Encode('not json')) }));
      deepEqual((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).json, { result: 'stored', etag: sha(utf8Encode(BACKUP)) }, '200 with a body that is not JSON');
    },
  },
  {
    name: 'GET /api/cloud-backup: decrypts on-device and writes /backup.json and its ETag sidecar; with and without an ETag from the cloud',
    async run() {
      for (const withEtag of [true, false]) {
        const cloud = fakeCloud();
        if (!withEtag) cloud.withoutEtag();
        const { c, auth } = await rig({ cloud });
        equal((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).status, 200, 'push');
        equal((await call(c, 'DELETE', '/backup', { headers: auth })).status, 204, 'local copy removed');
        const r = await call(c, 'GET', '/api/cloud-backup', { headers: auth });
        const what = withEtag ? 'with an ETag' : 'without an ETag';
        equal(r.status, 200, `${what}: retrieve`);
        equal(r.text, BACKUP, `${what}: the plaintext configuration`);
        equal(r.headers.etag, `"${sha(utf8Encode(BACKUP))}"`, `${what}: the ETag of the plaintext`);
        checkSigned(c, cloud.seen[1]!, `${what}: retrieve`);
        equal(cloud.seen[1]!.method, 'GET', 'GET');
        // docs/firmware-api.md: the sidecar is the SHA-256 computed while writing, cloud ETag or not.
        equal(utf8Decode(c.storage.read('/backup.json', 0, c.storage.size('/backup.json') ?? 0)), BACKUP, `${what}: /backup.json`);
        equal(utf8Decode(c.storage.read('/backup.etag', 0, 64)), sha(utf8Encode(BACKUP)), `${what}: /backup.etag`);
        const head = await call(c, 'HEAD', '/backup', { headers: auth });
        equal(head.headers.etag, `"${sha(utf8Encode(BACKUP))}"`, `${what}: HEAD /backup`);
      }
    },
  },
  {
    name: "GET /api/cloud-backup: another board's blob (another fuse key) is 422 and the local backup stays as it was",
    async run() {
      const cloud = fakeCloud();
      const { c, auth } = await rig({ cloud, uuid: 'ctl-original', fuseKeyHex: 'a1'.repeat(32) });
      equal((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).status, 200, 'push');
      const replacement = await rig({ cloud, uuid: 'ctl-original', fuseKeyHex: 'b2'.repeat(32), backup: '{"mine":true}' });
      const r = await call(replacement.c, 'GET', '/api/cloud-backup', { headers: replacement.auth });
      equal(r.status, 422, 'cannot decrypt');
      equal(r.json.error, 'backup_decrypt_failed', 'code');
      equal(r.json.message, 'The cloud backup cannot be decrypted by this device (auth_failed); the local backup is unchanged', 'message');
      equal((await call(replacement.c, 'GET', '/backup', { headers: replacement.auth })).text, '{"mine":true}', 'local backup unchanged');
      equal(replacement.c.storage.size('/backup.json.tmp'), null, 'no temporary file left');
      // A blob cut short (tag missing) is refused the same way.
      cloud.answerWith(() => ({ status: 200, headers: {}, body: bytesReader(encryptFfce(c.hal.crypto, backupKey(c), utf8Encode(BACKUP)).slice(0, -1)) }));
      equal((await call(c, 'GET', '/api/cloud-backup', { headers: auth })).status, 422, 'a truncated blob');
      equal((await call(c, 'GET', '/backup', { headers: auth })).text, BACKUP, 'local backup unchanged');
    },
  },
  {
    name: 'DELETE /api/cloud-backup: 204 removes the cloud copy and the local one; 404 from the cloud keeps the local one',
    async run() {
      const { c, auth, cloud } = await rig();
      equal((await call(c, 'DELETE', '/api/cloud-backup', { headers: auth })).status, 404, 'nothing in the cloud yet');
      equal(c.device.local.size() !== null, true, 'the local backup is kept on a 404');
      equal((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).status, 200, 'push');
      const del = await call(c, 'DELETE', '/api/cloud-backup', { headers: auth });
      equal(del.status, 204, 'delete');
      equal(del.bytes.length, 0, 'no body');
      checkSigned(c, cloud.seen.at(-1)!, 'delete');
      equal(cloud.seen.at(-1)!.method, 'DELETE', 'DELETE');
      equal(cloud.blobs.size, 0, 'the cloud copy is gone');
      equal(c.storage.size('/backup.json'), null, 'local /backup.json removed');
      equal(c.storage.size('/backup.etag'), null, 'local sidecar removed');
      const get = await call(c, 'GET', '/api/cloud-backup', { headers: auth });
      equal(get.status, 404, 'then 404');
      equal(get.json.error, 'no_cloud_backup', 'code');
      equal(get.json.message, 'There is no backup of this device in the cloud', 'message');
      cloud.answerWith(() => cloud.json(200, {}));
      await call(c, 'PUT', '/backup', { headers: auth, body: '{}' });
      equal((await call(c, 'DELETE', '/api/cloud-backup', { headers: auth })).status, 204, 'a 200 from the cloud is success too');
      equal(c.storage.size('/backup.json'), null, 'local removed then too');
    },
  },
  {
    name: 'GET /api/cloud-backup/info: a signed GET with If-None-Match: * (no blob moves, nothing changes): none, then the ETag and date, against the local backup',
    async run() {
      const { c, auth, cloud } = await rig();
      const none = await call(c, 'GET', '/api/cloud-backup/info', { headers: auth });
      equal(none.status, 200, 'nothing in the cloud: 200');
      deepEqual(none.json, { stored: false }, 'stored: false');
      const asked = cloud.seen.at(-1)!;
      checkSigned(c, asked, 'info');
      equal(asked.method, 'GET', 'a GET');
      equal(asked.headers['if-none-match'], '*', 'If-None-Match: * (the cloud answers 304 with the headers only)');
      equal((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).status, 200, 'push');
      const etag = sha(utf8Encode(BACKUP));
      // The cloud's 304 to If-None-Match: *, as cloud/backup/routes.ts sends it.
      cloud.answerWith(() => ({ status: 304, headers: { etag: `"${etag}"`, 'x-last-backup-date': '2026-11-21T12:00:00.000Z' }, body: bytesReader(new Uint8Array(0)) }));
      const held = await call(c, 'GET', '/api/cloud-backup/info', { headers: auth });
      deepEqual(held.json, { stored: true, etag, last_backup_date: '2026-11-21T12:00:00.000Z', same_as_local: true }, 'the same as the local backup');
      await call(c, 'PUT', '/backup', { headers: auth, body: '{"scene":2}' });
      equal((await call(c, 'GET', '/api/cloud-backup/info', { headers: auth })).json.same_as_local, false, 'another local backup');
      equal(c.storage.size('/backup.json'), '{"scene":2}'.length, 'the local backup untouched by the read');
      cloud.answerWith(() => cloud.json(500, { error: 'internal_error' }));
      const broken = await call(c, 'GET', '/api/cloud-backup/info', { headers: auth });
      equal(broken.status, 502, 'another cloud answer: 502');
      equal(broken.json.error, 'cloud_error', 'cloud_error');
      equal((await call(c, 'GET', '/api/cloud-backup/info')).status, 401, 'the visual-token is required');
    },
  },
  {
    name: 'the preconditions: 409 not_provisioned without a cloud, 503 with an unsynchronized clock, 404 without a local backup (nothing sent)',
    async run() {
      const unconfigured = await rig({ configured: false });
      for (const method of ['POST', 'GET', 'DELETE']) {
        const r = await call(unconfigured.c, method, '/api/cloud-backup', { headers: unconfigured.auth });
        equal(r.status, 409, `${method} without a cloud`);
        equal(r.json.error, 'not_provisioned', `${method} code`);
        equal(r.json.message, 'The device is not provisioned for the cloud (no cloud configuration)', `${method} message`);
      }
      const { b, c, auth, cloud } = await rig({ backup: null });
      const none = await call(c, 'POST', '/api/cloud-backup', { headers: auth });
      equal(none.status, 404, 'no local backup');
      equal(none.json.error, 'no_local_backup', 'code');
      equal(none.json.message, 'There is no local /backup.json', 'message');
      b.clock.isSynchronized = false;
      for (const method of ['POST', 'GET', 'DELETE']) {
        const r = await call(c, method, '/api/cloud-backup', { headers: auth });
        equal(r.status, 503, `${method} unsynchronized`);
        equal(r.json.error, 'clock_not_synchronized', `${method} code`);
        equal(r.json.message, 'The device clock is not synchronized', `${method} message`);
      }
      equal(cloud.seen.length + unconfigured.cloud.seen.length, 0, 'nothing was sent');
    },
  },
  {
    name: 'cloud answers: 401 unknown_device is 409 not_provisioned, another 4xx/5xx is 502 cloud_error naming it, an unreachable cloud is 409 cloud_unreachable',
    async run() {
      const { c, auth, cloud } = await rig();
      cloud.answerWith(() => cloud.json(401, { error: 'unknown_device' }));
      for (const method of ['POST', 'GET', 'DELETE']) {
        const r = await call(c, method, '/api/cloud-backup', { headers: auth });
        equal(r.status, 409, `${method}: unknown device`);
        equal(r.json.error, 'not_provisioned', `${method}: code`);
        equal(r.json.message, 'The device is not registered with the cloud', `${method}: message`);
      }
      // unknown_device only under 401: under 403 it is just a cloud error.
      cloud.answerWith(() => cloud.json(403, { error: 'unknown_device' }));
      equal((await call(c, 'POST', '/api/cloud-backup', { headers: auth })).status, 502, '403 unknown_device');
      cloud.answerWith(() => cloud.json(401, { error: 'invalid_signature' }));
      const bad = await call(c, 'POST', '/api/cloud-backup', { headers: auth });
      equal(bad.status, 502, 'another 401');
      deepEqual([bad.json.error, bad.json.message, bad.json.details], ['cloud_error', 'The cloud answered 401 invalid_signature', { cloud_status: 401, cloud_error: 'invalid_signature' }], 'named');
      cloud.answerWith(() => ({ status: 500, headers: {}, body: bytesReader(utf8Encode('<html>')) }));
      for (const method of ['POST', 'GET', 'DELETE']) {
        const r = await call(c, method, '/api/cloud-backup', { headers: auth });
        equal(r.status, 502, `${method}: 500`);
        deepEqual([r.json.error, r.json.message, r.json.details], ['cloud_error', 'The cloud answered 500', { cloud_status: 500 }], `${method}: named`);
      }
      cloud.answerWith(() => {
        throw new Error('connection refused');
      });
      const down = await call(c, 'GET', '/api/cloud-backup', { headers: auth });
      equal(down.status, 409, 'unreachable');
      equal(down.json.error, 'cloud_unreachable', 'code');
      ok(down.json.message.includes('connection refused'), 'the message says why');
      equal((await call(c, 'GET', '/backup', { headers: auth })).text, BACKUP, 'local backup untouched throughout');
    },
  },
  {
    name: 'the automatic backup: first 30 s after boot, then every 86,400 s, skipped silently without /backup.json',
    async run() {
      const { b, c, auth, cloud } = await rig({ backup: null });
      await b.clock.advance(30_000);
      equal(cloud.seen.length, 0, 'no backup: nothing sent at 30 s');
      equal(c.events.filter((e) => e.source === 'backup' && e.level !== 'info').length, 0, 'and nothing logged as a problem');
      await call(c, 'PUT', '/backup', { headers: auth, body: BACKUP });
      await b.clock.advance(86_400_000 - 1);
      equal(cloud.seen.length, 0, 'not before the interval');
      await b.clock.advance(1);
      equal(cloud.seen.length, 1, 'one push at 30 s + 86,400 s');
      checkSigned(c, cloud.seen[0]!, 'automatic push');
      await b.clock.advance(86_400_000);
      equal(cloud.seen.length, 2, 'and again a day later');
      const lines = () => c.events.filter((e) => e.source === 'backup').map((e) => `${e.level} ${e.message}`);
      deepEqual(lines(), ['info automatic cloud backup: stored', 'info automatic cloud backup: unchanged'], 'each run logged with its result');
      equal(c.device.autoBackup.runs, 2, 'two runs counted (the skipped one is not)');
      // A failing push is logged as a warning and the schedule goes on.
      cloud.answerWith(() => cloud.json(500, {}));
      await b.clock.advance(86_400_000);
      equal(lines().at(-1), 'warning automatic cloud backup failed: The cloud answered 500', 'the failure logged');
      cloud.answerWith(null);
      await b.clock.advance(86_400_000);
      equal(lines().at(-1), 'info automatic cloud backup: unchanged', 'and the next day it runs again');
      // stop() ends the schedule.
      c.device.autoBackup.stop();
      const sent = cloud.seen.length;
      await b.clock.advance(3 * 86_400_000);
      equal(cloud.seen.length, sent, 'nothing after stop()');
      c.device.autoBackup.stop();
    },
  },
];
