// OTA that goes wrong (ESP-IDF app rollback, docs/flash-and-boot.md): an image damaged on the way is
// refused by the passive slot's verification (esp_ota_end) and nothing changes; an image that
// verifies but does not come up (it crashes before marking itself valid) is rolled back by the
// bootloader at the next reset, and the board refuses to install that version again; the next good
// release installs and confirms itself.
import { UNLOADABLE_FIRMWARE } from '../../firmware/sdk-host/firmware-image.ts';
import { CHIPS } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import { check } from '../bench.ts';
import type { BenchBoard } from '../board.ts';
import { bootedVersion, reportedVersion } from './ota.ts';
import type { Scenario } from './types.ts';


export const otaRollbackScenarios: Scenario[] = [
  {
    name: 'ota-rollback',
    title: 'OTA: a corrupt image is refused, an image that does not come up is rolled back, the next good one confirms itself',
    needs: { controllers: 1 },
    async run(ctx) {
      const [board] = ctx.controllers() as [BenchBoard];
      const start = board.spec.firmwareVersion;
      const track = `/admin/firmware/${board.spec.hardwareClass}/${board.spec.productHex}/${board.spec.hardwareClass}`;
      const release = async (version: string, image?: Uint8Array, name?: string) => {
        const r = await ctx.admin('PUT', `${track}/${version}`, await ctx.serveImage(version, image, name));
        check(r.status === 201, `release ${version}: ${r.status}`);
      };
      await ctx.step(`power on the board on ${start}`, async () => {
        await ctx.start(board);
        await ctx.enroll(board);
        check((await reportedVersion(board)) === start, 'version at power-on');
      });
      await ctx.step('a corrupt image (one byte flipped after the build) is refused by esp_ota_end; the board stays on its version', async () => {
        const corrupt = (await ctx.imageFor(board, '2026.02.01')).slice();
        corrupt[0x2000] = corrupt[0x2000]! ^ 0x01;
        await release('2026.02.01', corrupt, '2026.02.01-corrupt');
        const from = board.consoleLines().length;
        const answer = await board.command('ota check', 60_000);
        // The SDK's ota module throws "end failed" when esp_ota_end refuses; ESP-IDF has logged why.
        check(/^ERR image_invalid .*end failed/.test(answer), `ota check answered ${answer}`);
        await board.waitForLine(/^E \(\d+\) esp_image: Image hash failed - image is corrupt/, 5000, from);
        check((await reportedVersion(board)) === start, 'the version after the refused image');
        check((await ctx.admin('POST', `${track}/2026.02.01/revoke`)).status === 200, 'revoke the corrupt release');
      });
      await ctx.step('an image that crashes before marking itself valid is installed, crashes, and is rolled back', async () => {
        await release('2026.03.01', buildVirtualAppImage({ chip: CHIPS[board.spec.chip], version: '2026.03.01', firmware: UNLOADABLE_FIRMWARE }));
        const from = board.consoleLines().length;
        const answer = await board.command('ota check', 60_000);
        check(answer.startsWith('OK ') && JSON.parse(answer.slice(3)).version === '2026.03.01', `ota check answered ${answer}`);
        await board.waitForLine(/^I \(\d+\) boot: otadata\[\d\]: ota_seq \d+ selects slot 1, a new image: now PENDING_VERIFY/, 60_000, from);
        await board.waitForLine(/^HOST firmware fault \(the app failed to start: .*\): reset$/, 60_000, from);
        await board.waitForLine(/^W \(\d+\) boot: otadata\[\d\] \(ota_seq \d+, slot 1\) is still PENDING_VERIFY: marking it ABORTED \(app rollback\)$/, 60_000, from);
        await bootedVersion(board, start, from);
        const v = await reportedVersion(board);
        check(v === start, `after the rollback the board reports ${v}`);
        ctx.snapshot(board, 'rolled back');
      });
      await ctx.step('the rolled-back version is not installed again', async () => {
        const answer = await board.command('ota check', 60_000);
        check(/^ERR rolled_back refusing 2026\.03\.01: it was rolled back on this board \(ota_1, aborted\)/.test(answer), `ota check answered ${answer}`);
        check((await ctx.admin('POST', `${track}/2026.03.01/revoke`)).status === 200, 'revoke the broken release');
      });
      await ctx.step('the next good release installs, boots PENDING_VERIFY and confirms itself', async () => {
        await release('2026.04.01', await ctx.imageFor(board, '2026.04.01'));
        const from = board.consoleLines().length;
        const answer = await board.command('ota check', 60_000);
        check(answer.startsWith('OK ') && JSON.parse(answer.slice(3)).version === '2026.04.01', `ota check answered ${answer}`);
        await bootedVersion(board, '2026.04.01', from);
        await board.waitForLine(/^LOG INFO ota: firmware 2026\.04\.01 in ota_1 is up: marked valid, rollback cancelled$/, 30_000, from);
        check((await reportedVersion(board)) === '2026.04.01', 'the version after the good release');
        ctx.figures['ota rollback'] = `${start} → 2026.03.01 (rolled back) → 2026.04.01`;
      });
    },
  },
];
