// Runs scenarios on a rig: a fresh bench each, progress on the terminal, results for the report.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScenarioContext, type StepResult } from './bench.ts';
import { startBroker, type Broker } from './broker.ts';
import type { RigSpec } from './rig.ts';
import type { Scenario } from './scenarios/index.ts';

export interface ScenarioResult {
  name: string;
  title: string;
  status: 'passed' | 'failed' | 'not_applicable';
  reason?: string;
  ms: number;
  steps: StepResult[];
  figures: Record<string, string | number>;
  failedStep?: string;
  error?: string;
}

export interface BenchRun {
  rig: RigSpec;
  startedAt: string;
  ms: number;
  results: ScenarioResult[];
}

function applicable(rig: RigSpec, s: Scenario): string | null {
  const controllers = rig.boards.filter((b) => b.role === 'controller');
  const clients = rig.boards.filter((b) => b.role === 'client').length;
  if (controllers.length < (s.needs.controllers ?? 0)) return `needs ${s.needs.controllers} controllers, the rig has ${controllers.length}`;
  if (clients < (s.needs.clients ?? 0)) return `needs ${s.needs.clients} clients, the rig has ${clients}`;
  if (s.needs.debugSource && controllers[0]?.build !== 'debug') return 'needs a debug build on the source controller (fault injection)';
  return null;
}

export async function runScenarios(
  rig: RigSpec,
  scenarios: Scenario[],
  o: { reportDir: string; progress?: (line: string) => void },
): Promise<BenchRun> {
  const say = o.progress ?? (() => undefined);
  mkdirSync(o.reportDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const results: ScenarioResult[] = [];
  let broker: Broker | undefined;
  try {
    broker = await startBroker(rig.mqtt.kind, rig.mqtt.kind === 'mosquitto' ? rig.mqtt.port : 0);
    for (const [i, s] of scenarios.entries()) {
      const reason = applicable(rig, s);
      if (reason) {
        say(`[${i + 1}/${scenarios.length}] ${s.name}: not applicable (${reason})`);
        results.push({ name: s.name, title: s.title, status: 'not_applicable', reason, ms: 0, steps: [], figures: {} });
        continue;
      }
      say(`[${i + 1}/${scenarios.length}] ${s.name}: ${s.title}`);
      const ctx = new ScenarioContext(rig, broker, join(work, s.name), o.reportDir, s.name, s.firmwareSettings ?? {});
      const started = performance.now();
      let error: unknown;
      try {
        await ctx.open();
        const stepsBefore = () => ctx.steps.length;
        let shown = 0;
        const ticker = setInterval(() => {
          while (shown < stepsBefore() - 1) {
            const st = ctx.steps[shown++]!;
            say(`    ${st.ok ? '✓' : '✗'} ${st.name} (${st.ms} ms)`);
          }
        }, 200);
        try {
          await s.run(ctx);
        } finally {
          clearInterval(ticker);
          for (const st of ctx.steps.slice(shown)) say(`    ${st.ok ? '✓' : '✗'} ${st.name} (${st.ms} ms)${st.error ? `: ${st.error}` : ''}`);
        }
      } catch (err) {
        error = err;
      } finally {
        await ctx.close().catch(() => undefined);
      }
      const failed = ctx.steps.find((st) => !st.ok);
      const result: ScenarioResult = {
        name: s.name,
        title: s.title,
        status: error ? 'failed' : 'passed',
        ms: Math.round(performance.now() - started),
        steps: ctx.steps,
        figures: ctx.figures,
      };
      if (error) {
        result.failedStep = failed?.name ?? '(set-up)';
        result.error = error instanceof Error ? error.message : String(error);
      }
      results.push(result);
      say(`    ${result.status === 'passed' ? 'PASSED' : `FAILED at "${result.failedStep}": ${result.error}`} in ${result.ms} ms`);
    }
  } finally {
    await broker?.close().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
  return { rig, startedAt, ms: Math.round(performance.now() - t0), results };
}
