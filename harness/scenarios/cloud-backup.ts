// Cloud backup round trip (spec 4.2): push, 304 when unchanged, retrieve after the local copy is
// deleted, delete. And, where the rig can make one, a replacement board with another fuse key
// cannot decrypt the original's backup.
import { check } from '../bench.ts';
import type { BenchBoard } from '../board.ts';
import { backupJson } from './helpers.ts';
import type { Scenario } from './types.ts';
import { API_PATHS } from '../../firmware/src/core/api-paths.ts';

export const cloudBackupScenarios: Scenario[] = [
  {
    name: 'cloud-backup-round-trip',
    title: 'Cloud backup: push, 304, retrieve, delete',
    needs: { controllers: 1 },
    async run(ctx) {
      const [board] = ctx.controllers() as [BenchBoard];
      const backup = backupJson(100_000);
      let auth: Record<string, string> = {};
      await ctx.step('power on, enroll with the cloud from the console, store a local backup', async () => {
        await ctx.start(board);
        await ctx.enroll(board);
        auth = await ctx.login(board);
        check((await board.http('ethernet', 'PUT', API_PATHS.backup, { headers: auth, body: backup })).status === 200, 'local backup stored');
      });
      await ctx.step('push: the cloud stores an FFCE blob, not the plaintext', async () => {
        const r = await board.http('ethernet', 'POST', API_PATHS.cloudBackup, { headers: auth });
        check(r.status === 200 && r.json.result === 'stored', `push answered ${r.status} ${r.text}`);
        const blob = (await ctx.cloud.store.getBackup(board.spec.uuid))?.blob;
        check(blob && blob.subarray(0, 4).toString() === 'FFCE' && !blob.includes(Buffer.from('Light 00001')), 'an encrypted blob');
      });
      await ctx.step('push again unchanged: the cloud answers 304', async () => {
        const r = await board.http('ethernet', 'POST', API_PATHS.cloudBackup, { headers: auth });
        check(r.status === 200 && r.json.result === 'unchanged', `second push ${r.text}`);
      });
      await ctx.step('delete the local copy, then retrieve it from the cloud', async () => {
        check((await board.http('ethernet', 'DELETE', API_PATHS.backup, { headers: auth })).status === 204, 'local delete');
        const r = await board.http('ethernet', 'GET', API_PATHS.cloudBackup, { headers: auth });
        check(r.status === 200 && r.text === backup, `retrieve answered ${r.status}`);
        check((await board.http('ethernet', 'GET', API_PATHS.backup, { headers: auth })).text === backup, 'the local copy is back');
      });
      await ctx.step('delete the cloud backup: 204, then 404 everywhere', async () => {
        check((await board.http('ethernet', 'DELETE', API_PATHS.cloudBackup, { headers: auth })).status === 204, 'delete');
        check((await board.http('ethernet', 'GET', API_PATHS.cloudBackup, { headers: auth })).status === 404, 'retrieve after delete');
        check((await board.http('ethernet', 'GET', API_PATHS.backup, { headers: auth })).status === 404, 'local copy removed too');
      });
    },
  },
  {
    name: 'cloud-backup-replacement-board',
    title: "Cloud backup: a replacement board (same UUID, another fuse key) cannot decrypt the original's backup",
    // The second controller stands in for the replacement by taking the first one's UUID; a physical
    // rig's boards keep the identity read from them (on a real rig, the operator swaps the board).
    needs: { controllers: 2, replaceBoard: true },
    async run(ctx) {
      const [board, other] = ctx.controllers() as [BenchBoard, BenchBoard];
      await ctx.step('power on the original, enroll it, store a local backup and push it', async () => {
        await ctx.start(board);
        await ctx.enroll(board);
        const auth = await ctx.login(board);
        check((await board.http('ethernet', 'PUT', API_PATHS.backup, { headers: auth, body: backupJson(20_000) })).status === 200, 'local backup stored');
        const r = await board.http('ethernet', 'POST', API_PATHS.cloudBackup, { headers: auth });
        check(r.status === 200 && r.json.result === 'stored', `push answered ${r.status} ${r.text}`);
      });
      await ctx.step('a replacement board (other fuse key, same UUID) cannot decrypt and keeps its own backup', async () => {
        other.spec.uuid = board.spec.uuid;
        await ctx.start(other);
        await ctx.enroll(other);
        const a = await ctx.login(other);
        await other.http('ethernet', 'PUT', API_PATHS.backup, { headers: a, body: '{"replacement":true}' });
        const r = await other.http('ethernet', 'GET', API_PATHS.cloudBackup, { headers: a });
        check(r.status === 422 && r.json.error === 'backup_decrypt_failed', `replacement retrieve answered ${r.status} ${r.text}`);
        check((await other.http('ethernet', 'GET', API_PATHS.backup, { headers: a })).text === '{"replacement":true}', 'its local backup is untouched');
      });
    },
  },
];
