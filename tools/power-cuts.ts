// npm run test:power-cuts [-- --cuts N --board-cuts M --seed S]: cuts the power of boards at seeded
// points of every operation that writes their flash (local backup PUT, cloud backup retrieve,
// record PUT and DELETE, the target procedure's wipe and copy, the event log, the boot's own repair),
// boots them again and checks nothing was lost (docs/storage.md, "Power cuts"). Prints per scenario,
// then `power cuts: injected=<n> recovered=<r> lost=<l>`; exits 1 when anything was lost, 2 on a
// usage error.
import { Command, InvalidArgumentError } from 'commander';
import { runPowerCuts, summaryLine } from './power-cuts/engine.ts';

function integer(min: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`must be an integer of at least ${min}, not ${JSON.stringify(value)}`);
    return n;
  };
}

const program = new Command('power-cuts')
  .description('Cut the power of virtual boards while they write their flash, and check that nothing is lost')
  .option('--cuts <n>', 'cuts on the in-memory platform', integer(0), 1000)
  .option('--board-cuts <n>', 'cuts on virtual boards (the firmware the Moddable SDK built for the host)', integer(0), 30)
  .option('--seed <s>', 'seed of the cut points and of what each cut leaves', integer(0), 1)
  .option('--verbose', 'a line per trial')
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

async function main(): Promise<void> {
  const o = program.parse().opts<{ cuts: number; boardCuts: number; seed: number; verbose?: boolean }>();
  console.log(`power cuts: ${o.cuts} on the memory platform, ${o.boardCuts} on virtual boards, seed ${o.seed}`);
  let trials = 0;
  const report = await runPowerCuts({
    cuts: o.cuts,
    boardCuts: o.boardCuts,
    seed: o.seed,
    onTrial: (r, platform) => {
      trials++;
      if (o.verbose) console.log(`  ${platform} ${r.scenario}: ${r.cuts} cut(s) ${r.problems.length ? 'LOST' : 'recovered'}`);
      else if (trials % 100 === 0) console.log(`  ${trials} trials`);
    },
  });
  for (const [name, t] of Object.entries(report.byScenario)) console.log(`  ${name.padEnd(40)} injected=${t.injected} recovered=${t.recovered} lost=${t.lost}`);
  for (const line of report.losses.slice(0, 20)) console.log(`LOST ${line}`);
  if (report.losses.length > 20) console.log(`… and ${report.losses.length - 20} more`);
  console.log(`  memory: injected=${report.byPlatform.memory.injected}, boards: injected=${report.byPlatform.board.injected}; ${(report.durationMs / 1000).toFixed(1)} s`);
  console.log(summaryLine(report));
  process.exitCode = report.lost > 0 ? 1 : 0;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
