// Controller provisioning (spec 3.6) on the rig's source and target controllers: every row of the
// outcome table, the refusals, and normal mode after the reboot with the same records.
import { check, type ScenarioContext } from '../bench.ts';
import type { BenchBoard } from '../board.ts';
import { backupJson, enableProvisioning, nextEvent, seedSource, type SourceSeed } from './helpers.ts';
import type { Scenario } from './types.ts';
import { API_PATHS, recordPath, recordsPath } from '../../firmware/src/core/api-paths.ts';
import { RECORD_KINDS } from '../../firmware/src/core/records.ts';

interface Run {
  source: BenchBoard;
  target: BenchBoard;
  outcome: Record<string, any>;
  from: number;
}

/** Seeds and arms the source, boots the target, and returns its provisioning event. */
async function provision(ctx: ScenarioContext, seed: Omit<SourceSeed, 'target'> & { registerTarget?: boolean }, before?: (r: { source: BenchBoard; target: BenchBoard }) => Promise<void>): Promise<Run> {
  const [source, target] = ctx.controllers() as [BenchBoard, BenchBoard];
  await ctx.step('power on the source controller', () => ctx.start(source));
  await ctx.step('register records and the backup on the source', () => seedSource(ctx, source, { ...seed, ...(seed.registerTarget === false ? {} : { target }) }));
  await ctx.step('enable provisioning mode on the source', async () => {
    await enableProvisioning(ctx, source);
    ctx.snapshot(source, 'provisioning mode on');
  });
  await before?.({ source, target });
  const from = target.consoleLines().length;
  const outcome = await ctx.step('power on the unconfigured target', async () => {
    await ctx.start(target);
    const e = await nextEvent(target, 'target_provisioning', from);
    ctx.snapshot(target, 'after the procedure');
    return e;
  });
  return { source, target, outcome, from };
}

function expectLines(run: Run, lines: string[]): void {
  check(run.outcome.kind === 'finished', `the procedure finished (got ${JSON.stringify(run.outcome)})`);
  check(JSON.stringify(run.outcome.lines) === JSON.stringify(lines), `OLED lines ${JSON.stringify(run.outcome.lines)}, expected ${JSON.stringify(lines)}`);
  const shown = run.target.consoleLines().slice(run.from).filter((l) => l.startsWith('OLED '));
  const expected = `OLED ${JSON.stringify(lines[1] === '' ? [lines[0]] : lines)}`;
  check(shown.includes(expected), `the OLED showed ${expected}`);
}

async function expectRebootIntoNormalMode(ctx: ScenarioContext, run: Run): Promise<void> {
  await ctx.step('the target reboots after the result display and comes up configured', async () => {
    const firstBoot = run.target.consoleLines().findIndex((l, i) => i >= run.from && l.startsWith('LOG INFO boot: '));
    check(firstBoot >= 0, 'the first boot was logged');
    const line = await run.target.waitForLine(/^LOG INFO boot: /, 20_000, firstBoot + 1);
    check(line.includes(run.target.spec.uuid), 'the target booted again');
    const status = JSON.parse((await run.target.command('status')).slice(3));
    check(status.configured === true, 'configured after the reboot');
    ctx.snapshot(run.target, 'normal mode after the reboot');
  });
  await ctx.step('the target holds the same records as the source', async () => {
    const [s, t] = [await ctx.login(run.source), await ctx.login(run.target)];
    for (const kind of RECORD_KINDS) {
      const a = (await run.source.http('ethernet', 'GET', recordsPath(kind), { headers: s })).json;
      const b = (await run.target.http('ethernet', 'GET', recordsPath(kind), { headers: t })).json;
      check(JSON.stringify(a) === JSON.stringify(b), `${kind}: source ${JSON.stringify(a)} target ${JSON.stringify(b)}`);
    }
  });
}

const twoControllers = { controllers: 2 };

export const controllerProvisioningScenarios: Scenario[] = [
  {
    name: 'controller-ok-backup',
    title: 'Controller provisioning: all counts match, backup received',
    needs: twoControllers,
    firmwareSettings: { resultDisplayMs: 1500 },
    async run(ctx) {
      const backup = backupJson(20_000);
      const run = await provision(ctx, { extraControllers: 2, clients: 4, backup });
      await ctx.step('the OLED and the event log show "Prov OK 3C 4L" / "Prov OK got backup"', async () => {
        expectLines(run, ['Prov OK 3C 4L', 'Prov OK got backup']);
        check(run.target.events().some((e) => e.message === 'Prov OK 3C 4L / Prov OK got backup'), 'the event log line');
      });
      await expectRebootIntoNormalMode(ctx, run);
      await ctx.step('the target has the backup with its ETag', async () => {
        const r = await run.target.http('ethernet', 'GET', API_PATHS.backup, { headers: await ctx.login(run.target) });
        check(r.status === 200 && r.text === backup, `backup ${r.status}`);
      });
    },
  },
  {
    name: 'controller-ok-no-backup',
    title: 'Controller provisioning: all counts match, no backup on the source',
    needs: twoControllers,
    firmwareSettings: { resultDisplayMs: 1500 },
    async run(ctx) {
      const run = await provision(ctx, { extraControllers: 1, clients: 2, backup: null });
      await ctx.step('the OLED shows "Prov OK 2C 2L" / "Prov OK no backup"', async () => expectLines(run, ['Prov OK 2C 2L', 'Prov OK no backup']));
      await expectRebootIntoNormalMode(ctx, run);
    },
  },
  {
    name: 'controller-count-mismatch',
    title: 'Controller provisioning: controller count mismatch, no reboot',
    needs: { controllers: 2, debugSource: true },
    async run(ctx) {
      const run = await provision(ctx, { extraControllers: 2, clients: 1, backup: '{}' }, async ({ source }) => {
        await ctx.step('make one controller record unreadable on the source (debug fault)', async () => {
          check((await source.command('fault record controllers ctl-1')).startsWith('OK '), 'fault set');
        });
      });
      await ctx.step('the OLED shows "Prov fail C 2/3"', async () => expectLines(run, ['Prov fail C 2/3', '']));
      await ctx.step('the target does not reboot and stays on the event log page', async () => {
        await new Promise((r) => setTimeout(r, 1500));
        check(run.target.consoleLines().slice(run.from).filter((l) => l.startsWith('LOG INFO boot: ')).length === 1, 'no reboot'); // the power-on's boot line only (the ROM and bootloader lines come before it)
        check(run.target.display().some((l) => l.includes('Prov fail C 2/3')), 'the event log page shows the failure');
        ctx.snapshot(run.target, 'event log page');
      });
    },
  },
  {
    name: 'client-count-mismatch',
    title: 'Controller provisioning: client count mismatch, no reboot',
    needs: { controllers: 2, debugSource: true },
    async run(ctx) {
      const run = await provision(ctx, { clients: 3, backup: null }, async ({ source }) => {
        await ctx.step('make one client record unreadable on the source (debug fault)', async () => {
          check((await source.command('fault record clients lamp-2')).startsWith('OK '), 'fault set');
        });
      });
      await ctx.step('the OLED shows "Prov fail L 2/3"', async () => expectLines(run, ['Prov fail L 2/3', '']));
    },
  },
  {
    name: 'controller-bad-backup',
    title: 'Controller provisioning: the backup cannot be parsed, no reboot',
    needs: twoControllers,
    async run(ctx) {
      const run = await provision(ctx, { clients: 1, backup: '{"outputs": [1, 2,' });
      await ctx.step('the OLED shows "Prov OK 1C 1L" / "Prov bad backup"', async () => expectLines(run, ['Prov OK 1C 1L', 'Prov bad backup']));
      await ctx.step('no backup was kept and the target does not reboot', async () => {
        await new Promise((r) => setTimeout(r, 1000));
        const r = await run.target.http('ethernet', 'GET', API_PATHS.backup, { headers: await ctx.login(run.target) });
        check(r.status === 404, `GET /backup answered ${r.status}`);
        check(run.target.consoleLines().slice(run.from).filter((l) => l.startsWith('LOG INFO boot: ')).length === 1, 'no reboot'); // the power-on's boot line only (the ROM and bootloader lines come before it)
      });
    },
  },
  {
    name: 'controller-mac-not-allowed',
    title: 'Controller provisioning: the target MAC is not in the allowlist',
    needs: twoControllers,
    async run(ctx) {
      const run = await provision(ctx, { clients: 1, registerTarget: false });
      await ctx.step('the target continues unprovisioned', async () => check(run.outcome.kind === 'connect_failed', `outcome ${JSON.stringify(run.outcome)}`));
      await ctx.step('the source shut its SoftAP down with an OLED warning and a log line', async () => {
        await run.source.waitForLine(/^LOG WARNING provisioning: station .* not in the allowlist/, 10_000);
        check(run.source.display().join(' ').includes(run.target.spec.ethernetMac!), 'the OLED names the MAC');
        const status = JSON.parse((await run.source.command('status')).slice(3));
        check(status.provisioning.active === false, 'provisioning mode off');
        ctx.snapshot(run.source, 'warning on the source');
      });
    },
  },
  {
    name: 'controller-unknown-uuid',
    title: 'Controller provisioning: the target UUID is unknown (404), nothing deleted',
    needs: { controllers: 2, debugSource: true },
    async run(ctx) {
      // First a copy that fails (one client unreadable): the target keeps the records it got and stays
      // unconfigured, so it provisions again at its next boot. That gives it something to lose.
      const first = await provision(ctx, { clients: 2, backup: null }, async ({ source }) => {
        await ctx.step('make one client record unreadable on the source (debug fault)', async () => {
          check((await source.command('fault record clients lamp-1')).startsWith('OK '), 'fault set');
        });
      });
      const { source, target } = first;
      const held = await ctx.step('the failed copy left records on the unconfigured target', async () => {
        check(first.outcome.kind === 'finished' && first.outcome.ok === false, `outcome ${JSON.stringify(first.outcome)}`);
        const auth = await ctx.login(target);
        const lists = { controllers: (await target.http('ethernet', 'GET', recordsPath('controllers'), { headers: auth })).json, clients: (await target.http('ethernet', 'GET', recordsPath('clients'), { headers: auth })).json };
        check(lists.controllers.length > 0 && lists.clients.length > 0, `records on the target: ${JSON.stringify(lists)}`);
        check(JSON.parse((await target.command('status')).slice(3)).configured === false, 'unconfigured');
        return lists;
      });
      await ctx.step('the source now knows the target MAC under another UUID', async () => {
        const auth = { ...(await ctx.login(source)), 'content-type': 'application/json' };
        check((await source.command('fault clear')).startsWith('OK '), 'fault cleared');
        check((await source.http('ethernet', 'DELETE', recordPath('controllers', target.spec.uuid), { headers: auth })).status === 204, 'own record removed');
        const put = await source.http('ethernet', 'PUT', recordPath('controllers', 'someone-else'), { headers: auth, body: JSON.stringify({ name: 'someone else', ethernet_mac: target.spec.ethernetMac }) });
        check(put.status === 201, `PUT answered ${put.status}`);
        await enableProvisioning(ctx, source);
      });
      const from = target.consoleLines().length;
      const outcome = await ctx.step('power-cycle the target: it provisions again', async () => {
        await target.reset();
        return nextEvent(target, 'target_provisioning', from);
      });
      await ctx.step('the exchange answers 404 and the target continues unprovisioned', async () => {
        check(outcome.kind === 'token_refused' && outcome.status === 404, `outcome ${JSON.stringify(outcome)}`);
        const status = JSON.parse((await target.command('status')).slice(3));
        check(status.configured === false, 'still unconfigured');
      });
      await ctx.step('nothing was deleted on the target: cleanup happens only after a valid token', async () => {
        const auth = await ctx.login(target);
        for (const kind of RECORD_KINDS) {
          const now = (await target.http('ethernet', 'GET', recordsPath(kind), { headers: auth })).json;
          check(JSON.stringify(now) === JSON.stringify(held[kind]), `${kind}: before ${JSON.stringify(held[kind])}, after ${JSON.stringify(now)}`);
        }
      });
    },
  },
  {
    name: 'controller-out-of-range',
    title: 'Controller provisioning: the source is out of range at 2 dBm',
    needs: { controllers: 2, moveBoards: true },
    async run(ctx) {
      const run = await provision(ctx, { clients: 1 }, async ({ target }) => {
        await ctx.step('place the target 4 m from the source', async () => {
          check(target.moveTo !== undefined, 'this rig can move boards');
          target.moveTo!({ x: 4, y: 0 });
        });
      });
      await ctx.step('the target sees no provisioning AP and boots unconfigured', async () => check(run.outcome.kind === 'no_ap', `outcome ${JSON.stringify(run.outcome)}`));
    },
  },
];
