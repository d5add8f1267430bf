// Edges of the cloud backup path: a download whose stream breaks mid-body is 409 cloud_unreachable,
// not "cannot be decrypted" (that is for blobs this board's key does not open, 422), and leaves the
// local backup as it was; the FFCE encryptor refuses an IV that is not the format's 12 bytes (DESIGN.md section 3).
import type { ClientRequest, ClientResponse } from '../src/hal/network.ts';
import { utf8Encode } from '../src/core/bytes.ts';
import { writeCloudConfig } from '../src/core/cloud/config.ts';
import { createFfceEncryptor, encryptFfce } from '../src/core/crypto/ffce.ts';
import { deriveBackupKey } from '../src/core/crypto/device-keys.ts';
import { createPureJsCrypto } from '../src/core/crypto/pure.ts';
import { seededRandom } from '../src/platform/memory/board.ts';
import { equal, ok, rejects, type TestCase } from './assert.ts';
import { bench, board, call, login } from './fixtures.ts';

const LOCAL = '{"outputs":[{"id":1,"name":"Porch"}]}';

export const cloudBackupEdgeCases: TestCase[] = [
  {
    name: 'GET /api/cloud-backup: a download that breaks mid-stream is not backup_decrypt_failed, and the local backup is unchanged',
    async run() {
      let blob: Uint8Array = new Uint8Array(0);
      const internet = async (r: ClientRequest): Promise<ClientResponse> => {
        void r;
        let sent = 0;
        return {
          status: 200,
          headers: { 'content-type': 'application/octet-stream' },
          body: {
            read: async () => {
              if (sent === 0) {
                sent = 40;
                return blob.slice(0, 40);
              }
              throw new Error('connection reset by peer');
            },
          },
        };
      };
      const c = board(bench(), { role: 'controller', internet });
      await c.device.boot();
      const auth = await login(c);
      writeCloudConfig(c.storage, { url: 'https://cloud.example' });
      equal((await call(c, 'PUT', '/backup', { headers: auth, body: LOCAL })).status, 200, 'local backup');
      blob = encryptFfce(c.hal.crypto, deriveBackupKey((m) => c.hal.fuse.hmac(m)), utf8Encode(`{"pad":"${'x'.repeat(200)}"}`));
      const r = await call(c, 'GET', '/api/cloud-backup', { headers: auth });
      // The spec gives no status for a cloud connection lost mid-download: the board says what it
      // says when the cloud cannot be reached at all (409 cloud_unreachable), not blamed on the key
      // (422 backup_decrypt_failed) nor on itself (500), and writes nothing.
      equal(`${r.status} ${r.json?.error}`, '409 cloud_unreachable', `a broken download (got ${r.text})`);
      equal((await call(c, 'GET', '/backup', { headers: auth })).text, LOCAL, 'the local backup is unchanged');
    },
  },
  {
    name: 'FFCE: the encryptor takes a 12-byte IV only',
    async run() {
      const crypto = createPureJsCrypto(seededRandom(3));
      const key = new Uint8Array(32).fill(7);
      for (const n of [0, 11, 13, 16]) await rejects(async () => createFfceEncryptor(crypto, key, new Uint8Array(n)), /12 bytes/, `${n} bytes`);
      equal(createFfceEncryptor(crypto, key, new Uint8Array(12)).header().length, 16, '12 bytes: magic and IV');
    },
  },
];
