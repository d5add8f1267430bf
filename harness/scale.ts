// The figure the bench reports beside its scenarios: controller provisioning from a source with
// 20 controllers, 100 clients and a 512 KB backup, on virtual boards: total time, and the target's
// XS meters (computrons; heap growth) against a small run (2 controllers, 10 clients, no backup).
import { check, type ScenarioContext } from './bench.ts';
import type { BenchBoard } from './board.ts';
import { backupJson, enableProvisioning, nextEvent, seedSource } from './scenarios/helpers.ts';
import type { Scenario } from './scenarios/types.ts';
import { VirtualBoard } from './virtual-board.ts';

async function provisionAtScale(ctx: ScenarioContext, label: string, controllers: number, clients: number, backupBytes: number): Promise<void> {
  const [source, target] = ctx.controllers() as [BenchBoard, BenchBoard];
  await ctx.step(`${label}: seed the source with ${controllers} controllers, ${clients} clients, ${backupBytes ? `${backupBytes / 1024} KB backup` : 'no backup'}`, async () => {
    await ctx.start(source);
    await seedSource(ctx, source, { target, extraControllers: controllers - 1, clients, backup: backupBytes ? backupJson(backupBytes) : null });
    await enableProvisioning(ctx, source);
  });
  await ctx.step(`${label}: provision the target`, async () => {
    const from = target.consoleLines().length;
    const t0 = performance.now();
    await ctx.start(target);
    const e = await nextEvent(target, 'target_provisioning', from);
    const ms = Math.round(performance.now() - t0);
    check(e.ok === true, `outcome ${JSON.stringify(e)}`);
    ctx.snapshot(target, label);
    ctx.figures[`${label}: total time (target power-on to result)`] = `${ms} ms`;
    if (target instanceof VirtualBoard) {
      // The firmware's heaps (XS's counters, sampled after a collection every 250 ms): the most it held
      // live against the esp32s3's creation, and its CPU time.
      const live = target.engine.heapLive;
      const max = await target.engine.heap();
      ctx.figures[`${label}: target chunk heap live peak`] = `${live.chunkBytes} of ${max.chunkMaxBytes} bytes (headroom ${max.chunkMaxBytes - live.chunkBytes})`;
      ctx.figures[`${label}: target slot heap live peak`] = `${live.slots} of ${max.slotMax} slots (headroom ${max.slotMax - live.slots})`;
      ctx.figures[`${label}: target firmware CPU`] = `${Math.round(target.engine.cpuMs())} ms`;
    }
  });
}

function figureRun(name: string, title: string, label: string, controllers: number, clients: number, backupBytes: number): Scenario {
  return {
    name,
    title,
    needs: { controllers: 2 },
    firmwareSettings: { resultDisplayMs: 60_000 },
    run: (ctx) => provisionAtScale(ctx, label, controllers, clients, backupBytes),
  };
}

export const scaleScenario = figureRun(
  'controller-provisioning-at-scale',
  'Figure: controller provisioning with 20 controllers, 100 clients and a 512 KB backup',
  'large (20C 100L 512 KB)',
  20,
  100,
  524_256,
);

export const smallScaleScenario = figureRun(
  'controller-provisioning-small',
  'Figure baseline: controller provisioning with 2 controllers, 10 clients, no backup',
  'small (2C 10L)',
  2,
  10,
  0,
);
