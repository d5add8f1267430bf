// `fleet bench --repeat N` and `npm run bench:rig`: the scenarios run N times, each run on fresh
// boards (every scenario gets a fresh bench, harness/bench.ts); a scenario that fails is run once
// more at once, and passing then makes it a flake: a bug of the firmware, the harness or the virtual
// rig, which a single run would have hidden or blamed on the change under test.
import { join } from 'node:path';
import type { RigSpec } from './rig.ts';
import { runScenarios, type BenchRun } from './runner.ts';
import type { Scenario } from './scenarios/index.ts';
import type { BenchImage, BoardIdentity } from './serial-board.ts';

export interface RepeatTally {
  name: string;
  /** Runs of the N that passed the first time, that failed and passed when run again (flakes), that failed twice. */
  passed: number;
  flakes: number;
  failed: number;
  /** Not applicable on this rig: never run. */
  notApplicable: boolean;
  /** The slowest attempt, reruns included. */
  slowestMs: number;
  /** Each failure's step and reason, with the run it happened in. */
  errors: string[];
}

/** A board's part in a scenario over the runs (a farm gives each run the boards it has free). */
export interface BoardTally {
  board: string;
  scenario: string;
  passed: number;
  flakes: number;
  failed: number;
}

/** The boards a run gets and gives back: a fixed rig, or places held on a farm (harness/farm/farm-rig.ts). */
export interface HeldRig {
  rig: RigSpec;
  /** What a farm's health check read from each board, by port (its first prepare starts from it). */
  identified?: Map<string, BoardIdentity>;
  release(): Promise<void>;
}
export type RigSource = () => Promise<HeldRig>;

export function fixedRig(rig: RigSpec): RigSource {
  return async () => ({ rig, release: async () => undefined });
}

export interface RepeatRun {
  repeat: number;
  ms: number;
  tallies: RepeatTally[];
  /** Every run and rerun, in order, with the folder its report belongs in. */
  runs: { run: BenchRun; reportDir: string }[];
  interrupted: boolean;
  /** Per board and scenario, when the boards come from a farm. */
  boards?: BoardTally[];
}

export async function repeatScenarios(
  rig: RigSpec,
  scenarios: Scenario[],
  o: { repeat: number; reportDir: string; progress?: (line: string) => void; image?: BenchImage; signal?: AbortSignal; hold?: RigSource },
): Promise<RepeatRun> {
  // The command line bounds the count (tools/commands/bench.ts); here it must only be one.
  if (!Number.isInteger(o.repeat) || o.repeat < 1) throw new RangeError(`repeat must be a whole number of at least 1: ${o.repeat}`);
  const t0 = performance.now();
  const tallies = new Map<string, RepeatTally>(scenarios.map((s) => [s.name, { name: s.name, passed: 0, flakes: 0, failed: 0, notApplicable: false, slowestMs: 0, errors: [] }]));
  const runs: RepeatRun['runs'] = [];
  const boards = new Map<string, BoardTally>();
  const tallyBoards = (held: HeldRig, scenario: string, outcome: 'passed' | 'flakes' | 'failed') => {
    for (const b of held.rig.boards) {
      const key = `${b.id}\0${scenario}`;
      const t = boards.get(key) ?? { board: b.id, scenario, passed: 0, flakes: 0, failed: 0 };
      t[outcome]++;
      boards.set(key, t);
    }
  };
  for (let i = 1; i <= o.repeat && !o.signal?.aborted; i++) {
    o.progress?.(`repeat ${i}/${o.repeat}`);
    const held = await (o.hold ?? fixedRig(rig))();
    try {
      if (await oneRun(held, i)) break;
    } finally {
      await held.release();
    }
  }
  return {
    repeat: o.repeat,
    ms: performance.now() - t0,
    tallies: [...tallies.values()],
    runs,
    interrupted: runs.some((r) => r.run.interrupted) || (o.signal?.aborted ?? false),
    ...(o.hold ? { boards: [...boards.values()] } : {}),
  };

  /** One run of every scenario on the boards held, a failure run again at once on the same boards; true when interrupted. */
  async function oneRun(held: HeldRig, i: number): Promise<boolean> {
    const common = { ...(o.progress ? { progress: o.progress } : {}), ...(o.image ? { image: o.image } : {}), ...(o.signal ? { signal: o.signal } : {}), ...(held.identified ? { identified: held.identified } : {}) };
    const reportDir = join(o.reportDir, `run-${i}`);
    const run = await runScenarios(held.rig, scenarios, { reportDir, ...common });
    runs.push({ run, reportDir });
    if (run.interrupted) return true;
    for (const r of run.results) {
      const t = tallies.get(r.name)!;
      t.slowestMs = Math.max(t.slowestMs, r.ms);
      if (r.status === 'not_applicable') t.notApplicable = true;
      else if (r.status === 'passed') (t.passed++, tallyBoards(held, r.name, 'passed'));
      else {
        t.errors.push(`run ${i}: at "${r.failedStep}": ${r.error}`);
        o.progress?.(`repeat ${i}/${o.repeat}: ${r.name} failed; running it again`);
        const againDir = join(o.reportDir, `run-${i}-again-${r.name}`);
        const again = await runScenarios(held.rig, scenarios.filter((s) => s.name === r.name), { reportDir: againDir, ...common });
        runs.push({ run: again, reportDir: againDir });
        const second = again.results[0];
        if (second) t.slowestMs = Math.max(t.slowestMs, second.ms);
        const outcome = second?.status === 'passed' ? 'flakes' : 'failed';
        t[outcome]++;
        tallyBoards(held, r.name, outcome);
      }
    }
    return false;
  }
}

/** One line per scenario and the totals line that `npm run bench:rig` also prints. */
export function repeatTable(r: RepeatRun): string {
  const width = Math.max(8, ...r.tallies.map((t) => t.name.length));
  const rows = r.tallies.map((t) =>
    t.notApplicable
      ? `${t.name.padEnd(width)}  n/a`
      : `${t.name.padEnd(width)}  passed ${t.passed}/${r.repeat}  flakes ${t.flakes}  failed ${t.failed}  slowest ${(t.slowestMs / 1000).toFixed(1)} s${t.errors.length ? `\n${t.errors.map((e) => `  ${e}`).join('\n')}` : ''}`,
  );
  const perBoard = (r.boards ?? []).map((b) => `${b.board} ${b.scenario}  passed ${b.passed}  flakes ${b.flakes}  failed ${b.failed}`);
  return [...rows, ...(perBoard.length ? ['per board:', ...perBoard.map((l) => `  ${l}`)] : []), repeatLine(r)].join('\n');
}

export function repeatLine(r: RepeatRun): string {
  const ran = r.tallies.filter((t) => !t.notApplicable);
  const flakes = ran.reduce((n, t) => n + t.flakes, 0);
  const slowest = Math.max(0, ...ran.map((t) => t.slowestMs)) / 1000;
  return `bench repeat runs=${r.repeat} scenarios=${ran.length} flakes=${flakes} slowest_seconds=${slowest.toFixed(1)}`;
}
