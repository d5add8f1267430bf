// --repeat: each of N runs on a fresh bench; a scenario that fails is run again at once, and a pass
// then is counted as a flake, two failures as a failure. Scenarios here need no boards: one passes
// always, one fails on its first attempt only (a flake), one always fails, one cannot run on the rig.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { check } from '../../harness/bench.ts';
import { repeatLine, repeatScenarios, repeatTable } from '../../harness/repeat.ts';
import { loadRig } from '../../harness/rig.ts';
import type { Scenario } from '../../harness/scenarios/types.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'repeat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function scenario(name: string, fails: (attempt: number) => boolean, needs: Scenario['needs'] = {}): Scenario {
  let attempt = 0;
  return {
    name,
    title: name,
    needs,
    run: async (ctx) => {
      attempt++;
      await ctx.step('the one step', async () => check(!fails(attempt), `attempt ${attempt} failed`));
    },
  };
}

describe('repeatScenarios', () => {
  it('counts passes, flakes (failed, then passed when run again) and failures, and the slowest attempt', { timeout: 120_000 }, async () => {
    const chosen = [
      scenario('steady', () => false),
      scenario('flaky', (n) => n === 2), // the second run's first attempt fails; its rerun passes
      scenario('broken', () => true),
      scenario('too-big', () => false, { controllers: 9 }),
    ];
    const r = await repeatScenarios(rig, chosen, { repeat: 3, reportDir: dir });
    expect(r.tallies.map(({ name, passed, flakes, failed, notApplicable }) => ({ name, passed, flakes, failed, notApplicable }))).toEqual([
      { name: 'steady', passed: 3, flakes: 0, failed: 0, notApplicable: false },
      { name: 'flaky', passed: 2, flakes: 1, failed: 0, notApplicable: false },
      { name: 'broken', passed: 0, flakes: 0, failed: 3, notApplicable: false },
      { name: 'too-big', passed: 0, flakes: 0, failed: 0, notApplicable: true },
    ]);
    expect(r.tallies[2]!.errors).toEqual([1, 2, 3].map((i) => `run ${i}: at "the one step": attempt ${2 * i - 1} failed`));
    for (const t of r.tallies.slice(0, 3)) expect(t.slowestMs).toBeGreaterThan(0);
    // 3 runs, plus one rerun for the flake and three for the broken scenario.
    expect(r.runs.map((x) => x.reportDir.slice(dir.length + 1))).toEqual(['run-1', 'run-1-again-broken', 'run-2', 'run-2-again-flaky', 'run-2-again-broken', 'run-3', 'run-3-again-broken']);
    expect(existsSync(join(dir, 'run-2-again-flaky'))).toBe(true);
    expect(repeatLine(r)).toMatch(/^bench repeat runs=3 scenarios=3 flakes=1 slowest_seconds=\d+\.\d$/);
    expect(repeatTable(r).split('\n')).toContain('too-big   n/a');
    expect(repeatTable(r)).toMatch(/^flaky +passed 2\/3 +flakes 1 +failed 0 +slowest \d+\.\d s\n {2}run 2: at "the one step": attempt 2 failed$/m);
  });

  it('refuses a count under one', async () => {
    await expect(repeatScenarios(rig, [], { repeat: 0, reportDir: dir })).rejects.toThrow('repeat must be a whole number of at least 1: 0');
  });
});
