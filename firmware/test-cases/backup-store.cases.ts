// The local backup (spec 2.3, 4.2): PUT/GET/HEAD/DELETE /backup with ETag, 404, 413, streaming and
// atomic replacement.
import { hexEncode, utf8Encode } from '../src/core/bytes.ts';
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { MemoryStorage } from '../src/platform/memory/storage.ts';
import { LocalBackupStore } from '../src/core/backup/local-store.ts';
import { deepEqual, equal, ok, rejects, type TestCase } from './assert.ts';
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
    name: 'LocalBackupStore: chunked reads at the edges, a sidecar that is not a digest is repaired at boot, one writer at a time, a closed writer refuses',
    async run() {
      const storage = new MemoryStorage();
      const crypto = createPureJsCrypto(seededRandom(4));
      const store = new LocalBackupStore(storage, crypto, 100, 8);
      const read = async () => {
        const r = store.reader();
        const sizes: number[] = [];
        for (let c = await r.read(); c !== null; c = await r.read()) sizes.push(c.length);
        return sizes;
      };
      for (const [n, sizes] of [[16, [8, 8]], [17, [8, 8, 1]], [7, [7]], [0, []]] as const) {
        const w = store.begin();
        w.write(new Uint8Array(n).fill(0x20));
        equal(w.commit().size, n, `size ${n}`);
        deepEqual(await read(), sizes, `chunks of ${n} bytes`);
        equal(store.etag(), sha(new Uint8Array(n).fill(0x20)), `ETag of ${n} bytes`);
      }
      // A sidecar that is no digest counts as missing, and the boot repair recomputes it, in chunks.
      const w = store.begin();
      w.write(utf8Encode('{"chunked":"across several 8-byte reads"}'));
      w.commit();
      for (const bad of ['not a digest', 'A'.repeat(64), '0'.repeat(63)]) {
        const f = storage.create('/backup.etag');
        f.write(utf8Encode(bad));
        f.close();
        equal(store.etag(), null, `sidecar ${JSON.stringify(bad)}`);
        store.recover();
        equal(store.etag(), sha(utf8Encode('{"chunked":"across several 8-byte reads"}')), `repaired after ${JSON.stringify(bad)}`);
      }
      store.recover();
      equal(store.etag(), sha(utf8Encode('{"chunked":"across several 8-byte reads"}')), 'a good pair is left as it is');
      storage.remove('/backup.json');
      store.recover();
      equal(storage.size('/backup.etag'), null, 'a sidecar without its backup is removed');
      const first = store.begin();
      await rejects(async () => store.begin(), /backup_busy/, 'a second writer');
      first.write(utf8Encode('{}'));
      first.commit();
      await rejects(async () => first.write(utf8Encode('x')), /closed/, 'write after commit');
      await rejects(async () => first.commit(), /closed/, 'commit twice');
      const second = store.begin();
      second.abort();
      second.abort();
      await rejects(async () => second.commit(), /closed/, 'commit after abort');
      equal(store.size(), 2, 'the committed backup stays');
    },
  },
  {
    name: 'a power cut between the two renames is repaired by the boot of the board',
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
      equal(store.etag(), sha(utf8Encode('{"a":1}')), 'before the repair the sidecar is the old one');
      // The board powers up on that flash: its boot() alone must repair it, before the API serves.
      const c = board(bench(), { role: 'controller', storage });
      await c.device.boot();
      equal(storage.size('/backup.etag.tmp'), null, 'no temporary sidecar');
      const auth = await login(c);
      const head = await call(c, 'HEAD', '/backup', { headers: auth });
      equal(head.headers.etag, `"${sha(utf8Encode('{"a":2}'))}"`, 'the served ETag is the hash of the file now in place');
      equal((await call(c, 'GET', '/backup', { headers: auth })).text, '{"a":2}', 'the new content');
    },
  },
];
