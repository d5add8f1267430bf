// OTA (spec 4.1): a board on an old version walks three releases one by one, skipping a revoked one;
// each hop is an ESP-IDF app image (as `fleet image build` makes it) written into the passive slot,
// and the board reports the new version from its app descriptor after the reboot. A board on a
// revoked version with nothing newer sees the 409 hard error (on its own track, so any rig runs it).
import { check } from '../bench.ts';
import type { BenchBoard } from '../board.ts';
import type { Scenario } from './types.ts';

/** The version the board reports on its console (`status`), which the firmware reads from the running image. */
export async function reportedVersion(board: BenchBoard): Promise<string> {
  const answer = await board.command('status');
  check(answer.startsWith('OK '), `status answered ${answer}`);
  return JSON.parse(answer.slice(3)).firmware_version as string;
}

/** Waits for the firmware's boot line of `version` after an OTA reboot. */
export async function bootedVersion(board: BenchBoard, version: string, fromIndex: number): Promise<void> {
  await board.waitForLine(new RegExp(`^LOG INFO boot: .*firmware ${version.replace(/\./g, '\\.')}`), 60_000, fromIndex);
}

export const otaScenarios: Scenario[] = [
  {
    name: 'ota-sequential',
    title: 'OTA: three releases one by one, a revoked one skipped',
    needs: { controllers: 1 },
    async run(ctx) {
      const [board] = ctx.controllers() as [BenchBoard];
      const track = `/admin/firmware/${board.spec.hardwareClass}/${board.spec.productHex}/${board.spec.hardwareClass}`;
      await ctx.step('release 2026.02.01, 2026.03.01, 2026.04.01, 2026.05.01 (app images) and revoke 2026.03.01', async () => {
        for (const v of ['2026.02.01', '2026.03.01', '2026.04.01', '2026.05.01']) {
          const r = await ctx.admin('PUT', `${track}/${v}`, await ctx.serveImage(v, await ctx.imageFor(board, v)));
          check(r.status === 201, `release ${v}: ${r.status}`);
        }
        check((await ctx.admin('POST', `${track}/2026.03.01/revoke`)).status === 200, 'revoke');
      });
      const installed: string[] = [];
      await ctx.step(`power on the board on ${board.spec.firmwareVersion}`, async () => {
        await ctx.start(board);
        await ctx.enroll(board);
        const v = await reportedVersion(board);
        check(v === board.spec.firmwareVersion, `the board reports ${v}`);
      });
      for (let i = 0; i < 4; i++) {
        const done = await ctx.step(`update check ${i + 1}`, async () => {
          const from = board.consoleLines().length;
          const answer = await board.command('ota check', 60_000);
          check(answer.startsWith('OK '), `ota check answered ${answer}`);
          const result = JSON.parse(answer.slice(3));
          if (result.kind === 'up_to_date') return true;
          installed.push(result.version);
          await bootedVersion(board, result.version, from);
          await board.waitForLine(/^LOG INFO ota: firmware .* marked valid, rollback cancelled$/, 30_000, from);
          const v = await reportedVersion(board);
          check(v === result.version, `after installing ${result.version} the board reports ${v}`);
          return false;
        });
        if (done) break;
      }
      await ctx.step('the board installed 2026.02.01, 2026.04.01, 2026.05.01 in that order', async () => {
        check(JSON.stringify(installed) === JSON.stringify(['2026.02.01', '2026.04.01', '2026.05.01']), `installed ${JSON.stringify(installed)}`);
        ctx.figures['ota releases walked'] = installed.join(' → ');
      });
    },
  },
  {
    name: 'ota-revoked-version',
    title: 'OTA: a board on a revoked version with nothing newer gets the 409 hard error',
    needs: { controllers: 1 },
    async run(ctx) {
      const [board] = ctx.controllers() as [BenchBoard];
      await ctx.step(`power on the board and revoke its version ${board.spec.firmwareVersion || '(read at power-on)'}`, async () => {
        await ctx.start(board);
        await ctx.enroll(board);
        const version = await reportedVersion(board);
        const track = `/admin/firmware/${board.spec.hardwareClass}/${board.spec.productHex}/${board.spec.hardwareClass}`;
        check((await ctx.admin('PUT', `${track}/2025.12.01`, { no_image: true })).status === 201, 'release 2025.12.01');
        check((await ctx.admin('PUT', `${track}/${version}`, { no_image: true })).status === 201, `release ${version}`);
        check((await ctx.admin('POST', `${track}/${version}/revoke`)).status === 200, `revoke ${version}`);
      });
      await ctx.step('the update check answers the 409 hard error and the board stays on its version', async () => {
        const answer = await board.command('ota check', 60_000);
        check(/^ERR check_failed update check answered 409/.test(answer), `answer ${answer}`);
        check((await reportedVersion(board)) === board.spec.firmwareVersion, 'the version after the refusal');
      });
    },
  },
];
