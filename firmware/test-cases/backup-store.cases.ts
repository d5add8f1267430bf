// The local backup (spec 2.3, 4.2): PUT/GET/HEAD/DELETE /backup with ETag, 404, 413, streaming and
// atomic replacement.
import { hexEncode, utf8Encode } from '../src/core/bytes.ts';
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { MemoryStorage } from '../src/platform/memory/storage.ts';
import { LocalBackupStore } from '../src/core/backup/local-store.ts';
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login } from './fixtures.ts';

const sha = (b: Uint8Array) => hexEncode(createPureJsCrypto(seededRandom(1)).sha256().update(b).digest());

export const backupStoreCases: TestCase[] = [
  {
    name: 'PUT /backup stores the file and its ETag; GET and HEAD answer the quoted ETag',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      const content = JSON.stringify({ inputs: [], outputs: [{ id: 1, name: 'Deck light' }] });
      const put = await call(c, 'PUT', '/backup', { headers: auth, body: content, chunkBytes: 7 });
      equal(put.status, 200, 'PUT status');
      const etag = sha(utf8Encode(content));
      equal(put.json.etag, etag, 'etag in the body');
      equal(put.headers.etag, `"${etag}"`, 'ETag header');
      const get = await call(c, 'GET', '/backup', { headers: auth });
      equal(get.status, 200, 'GET status');
      equal(get.text, content, 'content');
      equal(get.headers.etag, `"${etag}"`, 'GET ETag');
      const head = await call(c, 'HEAD', '/backup', { headers: auth });
      equal(head.status, 200, 'HEAD status');
      equal(head.bytes.length, 0, 'HEAD body');
      equal(head.headers.etag, `"${etag}"`, 'HEAD ETag');
      equal(head.headers['content-length'], String(content.length), 'HEAD length');
      equal((await call(c, 'GET', '/backup', { headers: { ...auth, 'if-none-match': `"${etag}"` } })).status, 304, 'conditional GET');
    },
  },
  {
    name: 'GET, HEAD and DELETE /backup answer 404 when there is none; DELETE removes file and sidecar',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      equal((await call(c, 'GET', '/backup', { headers: auth })).status, 404, 'GET');
      equal((await call(c, 'HEAD', '/backup', { headers: auth })).status, 404, 'HEAD');
      equal((await call(c, 'DELETE', '/backup', { headers: auth })).status, 404, 'DELETE');
      await call(c, 'PUT', '/backup', { headers: auth, body: '{}' });
      equal((await call(c, 'DELETE', '/backup', { headers: auth })).status, 204, 'DELETE');
      equal(c.storage.size('/backup.json'), null, 'file gone');
      equal(c.storage.size('/backup.etag'), null, 'sidecar gone');
    },
  },
  {
    name: 'a backup over 524,256 bytes is refused with 413 and the old one is kept',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      await call(c, 'PUT', '/backup', { headers: auth, body: '{"old":true}' });
      const big = new Uint8Array(524_257).fill(0x20);
      const declared = await call(c, 'PUT', '/backup', { headers: auth, body: big });
      equal(declared.status, 413, 'declared length');
      ok(/524256/.test(declared.json.message), 'the message names the limit');
      const streamed = await call(c, 'PUT', '/backup', { headers: { ...auth, 'content-length': '10' }, body: big, chunkBytes: 4096 });
      equal(streamed.status, 413, 'streamed past the limit');
      equal((await call(c, 'GET', '/backup', { headers: auth })).text, '{"old":true}', 'old backup kept');
      equal(c.storage.size('/backup.json.tmp'), null, 'no temporary file left');
      const exact = await call(c, 'PUT', '/backup', { headers: auth, body: new Uint8Array(524_256).fill(0x20) });
      equal(exact.status, 200, 'exactly at the limit');
    },
  },
  {
    name: 'the /backup routes need a visual-token (401) and a wrong password gets none',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      equal((await call(c, 'GET', '/backup')).status, 401, 'no token');
      equal((await call(c, 'PUT', '/backup', { headers: { 'visual-token': 'nope' }, body: '{}' })).status, 401, 'bad token');
      equal((await call(c, 'POST', '/api/login', { body: { password: 'wrong password' } })).status, 401, 'wrong password');
    },
  },
  {
    name: 'a power cut between the two renames is repaired at boot',
    async run() {
      const storage = new MemoryStorage();
      const crypto = createPureJsCrypto(seededRandom(3));
      const store = new LocalBackupStore(storage, crypto, 524_256, 4096);
      const w = store.begin();
      w.write(utf8Encode('{"a":1}'));
      w.commit();
      // Simulate: new content renamed into place, sidecar still in its temporary file.
      const f = storage.create('/backup.json');
      f.write(utf8Encode('{"a":2}'));
      f.close();
      const t = storage.create('/backup.etag.tmp');
      t.write(utf8Encode(sha(utf8Encode('{"a":2}'))));
      t.close();
      store.recover();
      equal(store.etag(), sha(utf8Encode('{"a":2}')), 'sidecar matches the file after recovery');
      equal(storage.size('/backup.etag.tmp'), null, 'no temporary sidecar');
    },
  },
];
