// Device health (docs/device-health.md, issue 34 "On the bench"): the debug-build source controller is
// made to abort three ways (memory full, an exception nobody catches, the task watchdog) and each
// crash reaches `fleet device health <uuid>` with its reason and crash kind; an image that never comes
// up on the target is rolled back by its bootloader and the board reports the update `failed:
// rolled_back`; a release whose board crashes after installing it pauses its own rollout (the health
// gate, docs/staged-rollouts.md), with the audit entry saying why.
//
// A board stays down after more than 5 resets within a minute (docs/flash-and-boot.md): the source
// resets 4 times by fault (3 crashes, then one on the new release) and the target once.
import { UNLOADABLE_FIRMWARE } from '../../firmware/sdk-host/firmware-image.ts';
import { CHIPS } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import { check, type ScenarioContext } from '../bench.ts';
import type { BenchBoard } from '../board.ts';
import { bootedVersion } from './ota.ts';
import type { Scenario } from './types.ts';

type Report = Record<string, any>;
interface Timeline {
  reports: { received_at: string; report: Report }[];
}

/** How long a report may take from the board's boot to the cloud (the reporter's first try is 2 s after boot). */
const REPORT_WAIT_MS = 60_000;

/** The newest seq the cloud has of a device (0 when none), through the admin API. */
async function newestSeq(ctx: ScenarioContext, uuid: string): Promise<number> {
  const r = await ctx.admin('GET', `/admin/devices/${uuid}/health?limit=1`);
  check(r.status === 200, `the device's health answered ${r.status}`);
  return (r.json as Timeline).reports[0]?.report.seq ?? 0;
}

/**
 * Waits until the cloud has a report of the device newer than `afterSeq` that `matches` (the admin API,
 * polled), then reads it as the operator does, with `fleet device health <uuid> --json`, and returns it.
 */
export async function awaitReport(ctx: ScenarioContext, uuid: string, what: string, afterSeq: number, matches: (r: Report) => boolean): Promise<Report> {
  const newer = (t: Timeline) => t.reports.map((x) => x.report).filter((r) => r.seq > afterSeq);
  let seen: Report[] = [];
  for (const until = Date.now() + REPORT_WAIT_MS; !seen.some(matches); ) {
    check(Date.now() < until, `no ${what} of ${uuid} reached the cloud within ${REPORT_WAIT_MS / 1000} s; it has ${JSON.stringify(seen)}`);
    await new Promise((r) => setTimeout(r, 250));
    const r = await ctx.admin('GET', `/admin/devices/${uuid}/health?limit=50`);
    check(r.status === 200, `the device's health answered ${r.status}`);
    seen = newer(r.json as Timeline);
  }
  const cli = newer((await ctx.fleetJson(['device', 'health', uuid])) as Timeline);
  const found = cli.find(matches);
  check(found, `fleet device health ${uuid} --json does not show the ${what} the API has: ${JSON.stringify(cli)}`);
  return found;
}

/**
 * A fault typed on the debug build's console, and the boot after the reset it causes. `fault memory`
 * never answers (the heap is full before it could); `throw` and `hang` answer first.
 */
async function crash(board: BenchBoard, fault: 'memory' | 'throw' | 'hang', version: string): Promise<void> {
  const from = board.consoleLines().length;
  const answer = board.command(`fault ${fault}`, 60_000).catch(() => 'no answer');
  if (fault !== 'memory') check((await answer).startsWith('OK '), `fault ${fault} answered ${await answer}`);
  await bootedVersion(board, version, from);
}

export const deviceHealthScenarios: Scenario[] = [
  {
    name: 'device-health',
    title: 'Device health: crashes reach fleet device health with their reason, an image never confirmed is reported rolled_back, a crashing release pauses its rollout',
    needs: { controllers: 2, debugSource: true },
    async run(ctx) {
      const [source, target] = ctx.controllers() as [BenchBoard, BenchBoard];
      const start = source.spec.firmwareVersion;
      const s = source.spec;
      const release = [s.hardwareClass, s.productHex, s.hardwareClass] as const;
      const track = `/admin/firmware/${release.join('/')}`;
      let seq = 0;

      await ctx.step(`power on both controllers on ${start}; each power-on reaches fleet device health`, async () => {
        await Promise.all([ctx.start(source), ctx.start(target)]);
        for (const b of [source, target]) {
          await ctx.enroll(b);
          await awaitReport(ctx, b.spec.uuid, 'power-on boot report', 0, (r) => r.kind === 'boot' && r.reason === 'power_on' && r.fw === start);
        }
        seq = await newestSeq(ctx, source.spec.uuid);
      });

      const crashes = [
        { fault: 'memory', title: 'memory full', reason: 'abort', kind: 'memory_full' },
        { fault: 'throw', title: 'an exception nobody catches', reason: 'abort', kind: 'unhandled_exception' },
        { fault: 'hang', title: 'a main loop that never yields (the task watchdog)', reason: 'watchdog', kind: undefined },
      ] as const;
      for (const c of crashes) {
        await ctx.step(`fault ${c.fault}: ${c.title}; the board reboots and fleet device health shows ${c.reason}${c.kind ? ` (${c.kind})` : ''}`, async () => {
          await crash(source, c.fault, start);
          const boot = await awaitReport(ctx, s.uuid, `boot report after fault ${c.fault}`, seq, (r) => r.kind === 'boot');
          check(boot.reason === c.reason, `after fault ${c.fault} the boot report says reason ${boot.reason}, not ${c.reason}: ${JSON.stringify(boot)}`);
          if (c.kind) check(boot.crash?.kind === c.kind, `after fault ${c.fault} the crash is ${JSON.stringify(boot.crash)}, not ${c.kind}`);
          else check(boot.crash === undefined, `a watchdog reset carries no XS crash summary: ${JSON.stringify(boot.crash)}`);
          seq = boot.seq;
          ctx.figures[`crash ${c.fault}`] = `${boot.reason}${boot.crash ? ` ${boot.crash.kind}: ${boot.crash.message}` : ''}`;
        });
      }

      await ctx.step('an image that never comes up is rolled back by the bootloader; the target reports the update failed: rolled_back', async () => {
        const version = '2026.03.01';
        const r = await ctx.admin('PUT', `${track}/${version}`, await ctx.serveImage(version, buildVirtualAppImage({ chip: CHIPS[target.spec.chip], version, firmware: UNLOADABLE_FIRMWARE })));
        check(r.status === 201, `release ${version}: ${r.status}`);
        const before = await newestSeq(ctx, target.spec.uuid);
        const from = target.consoleLines().length;
        const answer = await target.command('ota check', 60_000);
        check(answer.startsWith('OK ') && JSON.parse(answer.slice(3)).version === version, `ota check answered ${answer}`);
        await target.waitForLine(/^W \(\d+\) boot: .*marking it ABORTED \(app rollback\)$/, 60_000, from);
        await bootedVersion(target, start, from);
        const outcome = await awaitReport(ctx, target.spec.uuid, `outcome of the update to ${version}`, before, (x) => x.kind === 'update' && x.version === version && x.outcome === 'failed');
        check(outcome.reason === 'rolled_back', `the update to ${version} ended ${outcome.reason}, not rolled_back: ${JSON.stringify(outcome)}`);
        const boot = await awaitReport(ctx, target.spec.uuid, 'boot report after the rollback', before, (x) => x.kind === 'boot' && x.rolled_back !== undefined);
        check(boot.rolled_back.version === version && boot.fw === start, `the boot after the rollback says ${JSON.stringify(boot)}`);
        check((await ctx.admin('POST', `${track}/${version}/revoke`)).status === 200, `revoke ${version}`);
        ctx.figures['rolled back'] = `${version}: failed ${outcome.reason} (${outcome.detail ?? ''})`;
      });

      const crashing = '2026.04.01';
      await ctx.step(`release ${crashing} to the canary group with a health gate (fleet rollout set --health-margin 10 --health-min-hours 0)`, async () => {
        const r = await ctx.admin('PUT', `${track}/${crashing}`, await ctx.serveImage(crashing, await ctx.imageFor(source, crashing)));
        check(r.status === 201, `release ${crashing}: ${r.status}`);
        const groups = await ctx.fleet(['device', 'groups', s.uuid, 'canary']);
        check(groups.code === 0, `fleet device groups: ${groups.stderr}`);
        const rollout = await ctx.fleetJson(['rollout', 'set', ...release, crashing, '--percent', '0', '--groups', 'canary', '--no-schedule', '--health-margin', '10', '--health-min-hours', '0']);
        check(rollout.state === 'active' && rollout.health_margin === 10 && rollout.health_min_device_hours === 0, `the rollout is ${JSON.stringify(rollout)}`);
      });

      await ctx.step(`the source installs ${crashing}, confirms it and reports a heartbeat on it`, async () => {
        const from = source.consoleLines().length;
        const answer = await source.command('ota check', 60_000);
        check(answer.startsWith('OK ') && JSON.parse(answer.slice(3)).version === crashing, `ota check answered ${answer}`);
        await bootedVersion(source, crashing, from);
        await source.waitForLine(/^LOG INFO ota: firmware .* marked valid, rollback cancelled$/, 30_000, from);
        const succeeded = await awaitReport(ctx, s.uuid, `outcome of the update to ${crashing}`, seq, (x) => x.kind === 'update' && x.version === crashing && (x.outcome === 'succeeded' || x.outcome === 'failed'));
        check(succeeded.outcome === 'succeeded', `the update to ${crashing} ended ${JSON.stringify(succeeded)}`);
        // Device-hours on the release before it crashes: the heartbeat credits the seconds since the boot report.
        await new Promise((r) => setTimeout(r, 2000));
        check((await source.command('health now')).startsWith('OK '), 'health now');
        const beat = await awaitReport(ctx, s.uuid, `heartbeat on ${crashing}`, seq, (x) => x.kind === 'heartbeat' && x.fw === crashing);
        seq = beat.seq;
      });

      await ctx.step(`the source crashes on ${crashing}: the rollout pauses itself on health, and the audit log says why`, async () => {
        await crash(source, 'throw', crashing);
        const boot = await awaitReport(ctx, s.uuid, `boot report after the crash on ${crashing}`, seq, (x) => x.kind === 'boot');
        check(boot.reason === 'abort' && boot.crash?.kind === 'unhandled_exception', `the crash on ${crashing} was reported ${JSON.stringify(boot)}`);
        const health = await ctx.fleetJson(['firmware', 'health', ...release, crashing]);
        const rollout = await ctx.fleetJson(['rollout', 'show', ...release, crashing]);
        check(rollout.state === 'paused' && /^health: /.test(rollout.paused_reason ?? ''), `the rollout of ${crashing} is ${rollout.state} (${rollout.paused_reason}); fleet firmware health says ${JSON.stringify(health)}`);
        const audit = await ctx.fleetJson(['audit', '--limit', '20']);
        const entry = (audit.entries as Report[]).find((e) => e.action === 'pauseRolloutOnHealth' && e.path.endsWith(`/${crashing}/rollout`));
        check(entry && entry.actor === 'system', `no pauseRolloutOnHealth audit entry by system for ${crashing}: ${JSON.stringify(audit.entries.slice(0, 5))}`);
        check(entry.details?.reason === rollout.paused_reason && entry.details.rate > entry.details.margin, `the audit entry says ${JSON.stringify(entry.details)}`);
        check(health.unexpected_reboots >= 1 && health.gate?.state === 'paused' && health.gate.over === true, `fleet firmware health says ${JSON.stringify(health)}`);
        ctx.figures['rollout paused'] = rollout.paused_reason;
      });
    },
  },
];
