// The bench itself, run from the test suite so it cannot rot: every scenario on the five-board rig of
// virtual boards (real XS engine, pseudo-terminal consoles, aedes, the cloud on SQLite), the report it
// writes, and the two-board rig's not-applicable reasons.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { summaryTable, writeReport } from '../../harness/report.ts';
import { loadRig } from '../../harness/rig.ts';
import { runScenarios, type BenchRun } from '../../harness/runner.ts';
import { scenarios } from '../../harness/scenarios/index.ts';

const rigPath = (name: string) => fileURLToPath(new URL(`../../harness/rigs/${name}.json`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bench on the five-board rig', () => {
  let run: BenchRun;

  it('runs every scenario and each passes', { timeout: 420_000 }, async () => {
    run = await runScenarios(loadRig(rigPath('five-board')), scenarios, { reportDir: join(dir, 'five') });
    const failed = run.results.filter((r) => r.status !== 'passed').map((r) => `${r.name}: ${r.status} at "${r.failedStep}": ${r.error ?? r.reason}`);
    expect(failed).toEqual([]);
    expect(run.results.map((r) => r.name)).toEqual(scenarios.map((s) => s.name));
  });

  it('writes index.html with every scenario, its steps and OLED pictures, and junit.xml', () => {
    writeReport(run, join(dir, 'five'));
    const html = readFileSync(join(dir, 'five', 'index.html'), 'utf8');
    for (const r of run.results) expect(html).toContain(`id="${r.name}"`);
    const pictures = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!);
    expect(pictures.length).toBeGreaterThan(5);
    for (const p of pictures) expect(existsSync(join(dir, 'five', p))).toBe(true);
    expect(html).toContain('Prov OK 3C 4L');
    const junit = readFileSync(join(dir, 'five', 'junit.xml'), 'utf8');
    expect(junit).toMatch(new RegExp(`<testsuite name="bench five-board" tests="${run.results.length}" failures="0"`));
    expect(summaryTable(run)).toMatch(new RegExp(`\\n${run.results.length} passed, 0 failed$`));
  });
});

describe('the bench with mosquitto', () => {
  it("provisions a client that then connects to Debian's mosquitto when the rig names it", { timeout: 120_000 }, async () => {
    const rig = { ...loadRig(rigPath('five-board')), mqtt: { kind: 'mosquitto' as const } };
    const run = await runScenarios(rig, scenarios.filter((s) => s.name === 'client-provisioning'), { reportDir: join(dir, 'mosquitto') });
    expect(run.results.map((r) => `${r.name} ${r.status} ${r.error ?? ''}`.trim())).toEqual(['client-provisioning passed']);
  });
});

describe('the bench on the two-board rig', () => {
  it('says why a scenario does not apply instead of failing it', { timeout: 120_000 }, async () => {
    const pick = scenarios.filter((s) => ['client-provisioning', 'controller-out-of-range'].includes(s.name));
    const run = await runScenarios(loadRig(rigPath('two-board')), pick, { reportDir: join(dir, 'two') });
    expect(run.results.map((r) => [r.name, r.status, r.reason ?? null])).toEqual([
      ['client-provisioning', 'not_applicable', 'needs 1 clients, the rig has 0'],
      ['controller-out-of-range', 'passed', null],
    ]);
  });
});

describe('a failing scenario', () => {
  it('is reported failed, naming the step and why, with the boards\' OLED at the failure', { timeout: 60_000 }, async () => {
    const failing = {
      name: 'deliberately-failing',
      title: 'A scenario whose second step fails',
      needs: { controllers: 1 },
      async run(ctx: import('../../harness/bench.ts').ScenarioContext) {
        const board = ctx.controllers()[0]!;
        await ctx.step('power on', () => ctx.start(board));
        await ctx.step('expect the impossible', async () => {
          const status = JSON.parse((await board.command('status')).slice(3));
          if (status.configured !== true) throw new Error(`configured is ${status.configured}`);
        });
        await ctx.step('never reached', async () => undefined);
      },
    };
    const run = await runScenarios(loadRig(rigPath('two-board')), [failing], { reportDir: join(dir, 'fail') });
    const r = run.results[0]!;
    expect(r).toMatchObject({ status: 'failed', failedStep: 'expect the impossible', error: 'configured is false' });
    expect(r.steps.map((s) => s.ok)).toEqual([true, false]);
    expect(r.steps[1]!.snapshots.map((s) => s.label)).toContain('at the failure');
    writeReport(run, join(dir, 'fail'));
    expect(readFileSync(join(dir, 'fail', 'junit.xml'), 'utf8')).toContain('<failure message="expect the impossible: configured is false">');
    expect(summaryTable(run)).toContain('FAIL  deliberately-failing');
  });
});
