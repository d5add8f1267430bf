// `fleet bench [rig]` (npm run bench): starts the cloud, the broker and the rig, runs the scenarios
// with a progress display, prints a results table and writes bench-report/ (index.html, junit.xml,
// OLED pictures). Exit 1 when a scenario fails, naming the step and why.
import { InvalidArgumentError, type Command } from 'commander';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RigError } from '../../harness/rig-error.ts';
import { onStopSignals } from '../cli/stop-signals.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import type { CommandContext } from './context.ts';

/** `--repeat`'s bound (harness/repeat.ts takes any count of at least one). */
export const MAX_REPEAT = 100;

export function repeatCount(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_REPEAT) throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_REPEAT}: ${value}`);
  return n;
}

export const DEFAULT_RIG = fileURLToPath(new URL('../../harness/rigs/five-board.json', import.meta.url));

/** The `--flash` inputs as the bench writes them, and the version of the app image among them. */
async function benchImage(inputs: string[]): Promise<import('../../harness/serial-board.ts').BenchImage> {
  const [{ planFlash }, { productPartitions }, { appDescriptorOfImage }] = await Promise.all([
    import('../../harness/flash/inputs.ts'),
    import('../../firmware/image/product-partitions.ts'),
    import('../../firmware/image/app-desc.ts'),
  ]);
  const productTable = productPartitions();
  let plan;
  try {
    plan = planFlash(inputs, productTable);
  } catch (err) {
    throw new RigError(`--flash: ${(err as Error).message}`);
  }
  const apps = plan.files.map((f) => appDescriptorOfImage(f.data)?.version).filter((v): v is string => typeof v === 'string');
  if (apps.length !== 1) throw new RigError(`--flash: the inputs must hold exactly one app image (with an app descriptor), found ${apps.length}`);
  return { plan, version: apps[0]!, productTable, flashed: new Set() };
}

/**
 * `--flash`: the rig's physical boards (those with a port) flashed at once before the scenarios, as
 * `fleet flash --rig` does it; false when one failed (the summary says which). Virtual boards driven
 * over RFC 2217 are powered per scenario, fresh, so they are flashed when each scenario prepares them.
 */
async function flashRigFirst(rig: import('../../harness/rig.ts').RigSpec, image: import('../../harness/serial-board.ts').BenchImage): Promise<boolean> {
  const physical = rig.boards.filter((b) => b.port);
  if (physical.length === 0) return true;
  const [{ flashRig, rigSummary, rigTargets }, { BoardLines }] = await Promise.all([import('../../harness/flash/flash-rig.ts'), import('../cli/board-lines.ts')]);
  const targets = rigTargets({ ...rig, boards: physical });
  process.stderr.write(`bench: flashing ${targets.length} boards at once with ${image.version}\n`);
  const lines = new BoardLines(targets.map((t) => `${t.id} ${t.port}`), process.stderr);
  const results = await flashRig(targets, { plan: image.plan, productTable: image.productTable, baudRate: 921_600, reset: false, onState: (i, s) => lines.set(i, s.stage, s.fraction) });
  lines.finish();
  process.stderr.write(rigSummary(results) + '\n');
  for (const r of results) if (!r.error) image.flashed.add(r.target.port);
  const failed = results.filter((r) => r.error);
  if (failed.length) process.stderr.write(`bench: ${failed.map((r) => r.target.id).join(', ')} could not be flashed; no scenario ran\n`);
  return failed.length === 0;
}

function collectTags(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function farmWait(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError(`must be a whole number of seconds: ${value}`);
  return n;
}

/** `--farm` without the places' tags: a usage error (exit 2). */
class FarmUsageError extends Error {
  override name = 'FarmUsageError';
  readonly exitCode = EXIT_CODES.usage;
}

/**
 * The rig: the file's, or with --place-tags a farm rig of those places (on the file's site and
 * settings when one is named too); --farm-wait overrides the file's wait.
 */
async function benchRig(rigPath: string | undefined, o: { placeTags: string[]; farm?: string; farmWait?: number }): Promise<import('../../harness/rig.ts').RigSpec> {
  const { FARM_WAIT_SECONDS, loadRig } = await import('../../harness/rig.ts');
  const rig = loadRig(resolve(rigPath ?? DEFAULT_RIG));
  if (o.placeTags.length === 0) {
    if (o.farm && !rig.farm) throw new FarmUsageError(`--farm needs the boards' place tags: --place-tags role=controller,build=debug --place-tags role=controller (one per board), or a farm section in the rig file`);
    return rig.farm && o.farmWait ? { ...rig, farm: { ...rig.farm, waitSeconds: o.farmWait } } : rig;
  }
  if (!o.farm && !rig.farm?.coordinator) throw new FarmUsageError('--place-tags takes its boards from a farm: give the coordinator with --farm host:port');
  const { parsePlaceTags } = await import('../../harness/farm/tags.ts');
  const places = o.placeTags.map(parsePlaceTags);
  const { file, ...settings } = rig;
  const base = rigPath ? rig : { ...settings, name: 'farm', description: `boards taken from a labgrid coordinator by their place tags (site and settings of ${file?.path ?? 'the default rig'})` };
  return { ...base, boards: [], farm: { places, waitSeconds: o.farmWait ?? rig.farm?.waitSeconds ?? FARM_WAIT_SECONDS, ...(rig.farm?.coordinator ? { coordinator: rig.farm.coordinator } : {}) } };
}

async function farmHold(rig: import('../../harness/rig.ts').RigSpec, o: { farm?: string }): Promise<{ coordinator: string }> {
  const coordinator = o.farm ?? rig.farm?.coordinator;
  if (!coordinator) throw new FarmUsageError(`rig ${rig.name} takes its boards from a farm: give the coordinator with --farm host:port (or farm.coordinator in the rig file)`);
  const { coordinatorAddress } = await import('../../harness/farm/client.ts');
  return { coordinator: coordinatorAddress(coordinator) };
}

export function benchCommand(program: Command, { setExit }: CommandContext): void {
  program
    .command('bench')
    .description('Run the provisioning, backup, OTA and security scenarios on a rig (virtual boards by default) and write bench-report/')
    .argument('[rig]', 'rig file (JSON)', DEFAULT_RIG)
    .option('--scenario <name...>', 'run only these scenarios')
    .option('--report <dir>', 'where to write the report', 'bench-report')
    .option('--no-figures', 'skip the figure runs (20 controllers, 100 clients, 512 KB backup)')
    .option('--list', 'list the scenarios and exit')
    .option('--repeat <n>', `run the scenarios n times (1 to ${MAX_REPEAT}) on fresh boards, a failure run again at once; per scenario the passes, the flakes (passed when run again) and the slowest run`, repeatCount)
    .option('--flash <inputs...>', 'flash the physical boards first with this app image (or offset/file pairs, flasher_args.json), and again whenever a scenario left another version')
    .option('--farm <host:port>', 'take the boards from a labgrid coordinator\'s places (docs/board-farm.md): reserved by tags, health-checked, released at the end')
    .option('--place-tags <tags>', 'with --farm: one board\'s place tags, key=value,… (repeat once per board, in order: the first controller is the source)', collectTags, [])
    .option('--farm-wait <seconds>', 'with --farm: how long to wait for the places in all (default 600)', farmWait)
    .action(async function (this: Command, rigPath: string, o: { scenario?: string[]; report: string; figures: boolean; list?: boolean; flash?: string[]; repeat?: number; farm?: string; placeTags: string[]; farmWait?: number }) {
      // The harness (XS, serial ports, the broker) loads only for this command.
      const [{ summaryTable, writeReport }, { runScenarios }, { scaleScenario, smallScaleScenario }, { scenarios }] = await Promise.all([
        import('../../harness/report.ts'),
        import('../../harness/runner.ts'),
        import('../../harness/scale.ts'),
        import('../../harness/scenarios/index.ts'),
      ]);
      const all = [...scenarios, ...(o.figures ? [smallScaleScenario, scaleScenario] : [])];
      if (o.list) {
        for (const s of [...scenarios, smallScaleScenario, scaleScenario]) process.stdout.write(`${s.name.padEnd(36)} ${s.title}\n`);
        return;
      }
      const unknown = (o.scenario ?? []).filter((n) => !all.some((s) => s.name === n));
      if (unknown.length) throw new RigError(`unknown scenario: ${unknown.join(', ')} (see fleet bench --list)`);
      const chosen = o.scenario ? all.filter((s) => o.scenario!.includes(s.name)) : all;
      const rig = await benchRig(this.args.length > 0 ? rigPath : undefined, o);
      const farm = rig.farm ? await farmHold(rig, o) : undefined;
      const reportDir = resolve(o.report);
      const image = o.flash ? await benchImage(o.flash) : undefined;
      if (image && !farm && !(await flashRigFirst(rig, image))) {
        setExit(1);
        return;
      }
      process.stderr.write(`bench: rig ${rig.name} (${farm ? `${rig.farm!.places.length} boards from the farm at ${farm.coordinator}` : `${rig.boards.length} boards`}), ${chosen.length} scenarios, report in ${reportDir}${image ? `, boards flashed with ${image.version}` : ''}\n`);
      // SIGINT/SIGTERM: the scenario under way is abandoned, its boards, cloud and broker closed.
      const signals = onStopSignals('bench');
      const abort = new AbortController();
      void signals.stopped.then((signal) => {
        process.stderr.write(`bench: ${signal}: stopping the scenario under way and closing the bench\n`);
        signals.closing('the boards, the cloud and the broker');
        abort.abort(signal);
      });
      const hold = farm ? (await import('../../harness/farm/farm-rig.ts')).farmRig(rig, { ...farm, say: (line) => process.stderr.write(line + '\n'), signal: abort.signal }) : undefined;
      const stopped = (err: unknown) => {
        // A signal while waiting for places: what was held is given back (FarmLease.take), then the shell's code.
        if (signals.signal) process.exit(signals.signal === 'SIGTERM' ? 143 : 130);
        throw err;
      };
      const progress = (line: string) => process.stderr.write(line + '\n');
      if (o.repeat !== undefined) {
        const { repeatScenarios, repeatTable } = await import('../../harness/repeat.ts');
        let repeated;
        try {
          repeated = await repeatScenarios(rig, chosen, { repeat: o.repeat, reportDir, progress, signal: abort.signal, ...(image ? { image } : {}), ...(hold ? { hold } : {}) }).catch(stopped);
        } finally {
          signals.dispose();
        }
        if (repeated.interrupted) {
          // The runs that ended keep their reports, as the message says; the abandoned one has none.
          for (const r of repeated.runs) if (!r.run.interrupted) writeReport(r.run, r.reportDir);
          process.stderr.write(`bench: interrupted during the repeated runs; the reports of the runs that ended are in ${reportDir}\n`);
          process.exit(signals.signal === 'SIGTERM' ? 143 : 130);
        }
        for (const r of repeated.runs) writeReport(r.run, r.reportDir);
        process.stdout.write(repeatTable(repeated) + '\n');
        process.stdout.write(`reports: ${reportDir}/run-<n>/index.html\n`);
        if (repeated.tallies.some((t) => t.failed > 0)) setExit(1);
        return;
      }
      let run;
      try {
        // The boards held for the run (a farm's places) are given back however it ends.
        const held = await (hold ?? (async () => ({ rig, release: async () => undefined, identified: undefined })))().catch(stopped);
        try {
          run = await runScenarios(held.rig, chosen, { reportDir, progress, signal: abort.signal, ...(image ? { image } : {}), ...(held.identified ? { identified: held.identified } : {}) });
        } finally {
          await held.release();
        }
      } finally {
        signals.dispose();
      }
      if (run.interrupted) {
        // What the abandoned scenario still awaited (time-outs of up to a minute) would keep the
        // process alive: the bench is closed, so it ends here, with the shell's code for the signal.
        process.stderr.write(`bench: interrupted after ${run.results.length} of ${chosen.length} scenarios; no report written\n`);
        process.exit(signals.signal === 'SIGTERM' ? 143 : 130);
      }
      writeReport(run, reportDir);
      process.stdout.write(summaryTable(run) + '\n');
      process.stdout.write(`report: ${resolve(reportDir, 'index.html')}\n`);
      if (run.results.some((r) => r.status === 'failed')) setExit(1);
    });
}
