// Runs scenarios on a rig: a fresh bench each, progress on the terminal, results for the report.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeError, ScenarioContext, type StepResult } from './bench.ts';
import { startBroker, type Broker } from './broker.ts';
import type { BoardSpec, RigSpec } from './rig.ts';
import type { Scenario } from './scenarios/index.ts';
import type { BenchImage, BoardIdentity } from './serial-board.ts';
import { boardRead, describeTestbed, type Testbed } from './testbed.ts';

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
  /** Stopped by the caller's abort signal (SIGINT, SIGTERM): the scenarios after it did not run. */
  interrupted?: boolean;
  /** What was tested: rig file, boards and their firmware, commit, Node and SDK versions. */
  testbed: Testbed;
}

/** How the harness drives a board: in-process (virtual), or as a physical board (serial-board.ts). */
function driven(b: BoardSpec): 'direct' | 'hosted' | 'physical' {
  if (b.kind !== 'virtual') return 'physical';
  return b.drive === 'rfc2217' ? 'hosted' : 'direct';
}

/** Why a scenario cannot run on a rig (reported "not applicable on this rig"), or null. */
export function applicable(rig: RigSpec, s: Scenario): string | null {
  const controllers = rig.boards.filter((b) => b.role === 'controller');
  const clients = rig.boards.filter((b) => b.role === 'client').length;
  const n = s.needs;
  if (controllers.length < (n.controllers ?? 0)) return `needs ${n.controllers} controllers, the rig has ${controllers.length}`;
  if (clients < (n.clients ?? 0)) return `needs ${n.clients} clients, the rig has ${clients}`;
  if (n.debugSource && controllers[0]?.build !== 'debug') return 'needs a debug build on the source controller (fault injection)';
  const notDirect = rig.boards.filter((b) => driven(b) !== 'direct').map((b) => b.id);
  if (n.moveBoards && notDirect.length) return `needs boards the harness can move out of radio range; ${notDirect.join(', ')} are driven as physical boards (on a real rig the operator moves them, by hand)`;
  if (n.replaceBoard && notDirect.length) return `needs a replacement board that takes another board's UUID; ${notDirect.join(', ')} keep the identity read from them (on a real rig, swap the board by hand)`;
  if (n.softapHttp) {
    const unreachable = controllers.filter((b) => driven(b) === 'physical' && !b.softapUrl).map((b) => b.id);
    if (unreachable.length) return `needs the harness to reach a controller's SoftAP listener; ${unreachable.join(', ')} have no softap_url (a Wi-Fi adapter of the bench PC joined to the SoftAP)`;
  }
  if (n.settings?.length && rig.boards.some((b) => driven(b) === 'physical')) {
    const wanted = Object.fromEntries(n.settings.map((k) => [k, s.firmwareSettings?.[k]]));
    const missing = Object.entries(wanted).filter(([k, v]) => rig.buildSettings[k] !== v);
    if (missing.length) {
      return `needs a build with ${missing.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}; the rig's build_settings have ${missing.map(([k]) => `${k}=${JSON.stringify(rig.buildSettings[k] ?? 'default')}`).join(', ')}`;
    }
  }
  return null;
}

export async function runScenarios(
  rig: RigSpec,
  scenarios: Scenario[],
  o: { reportDir: string; progress?: (line: string) => void; image?: BenchImage; signal?: AbortSignal; identified?: Map<string, BoardIdentity> },
): Promise<BenchRun> {
  const say = o.progress ?? (() => undefined);
  mkdirSync(o.reportDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const results: ScenarioResult[] = [];
  const testbed = await describeTestbed(rig, o.image);
  let broker: Broker | undefined;
  try {
    broker = await startBroker(rig.mqtt.kind, rig.mqtt.kind === 'mosquitto' ? rig.mqtt.port : 0, rig.benchHost);
    // An abort ends the scenario under way at once: its boards and cloud are closed, its steps fail.
    const aborted = new Promise<never>((_, reject) => {
      const stop = () => reject(new Error(`interrupted (${String(o.signal?.reason ?? 'aborted')})`));
      if (o.signal?.aborted) stop();
      else o.signal?.addEventListener('abort', stop, { once: true });
    });
    aborted.catch(() => undefined);
    for (const [i, s] of scenarios.entries()) {
      if (o.signal?.aborted) break;
      const reason = applicable(rig, s);
      if (reason) {
        say(`[${i + 1}/${scenarios.length}] ${s.name}: not applicable on this rig (${reason})`);
        results.push({ name: s.name, title: s.title, status: 'not_applicable', reason, ms: 0, steps: [], figures: {} });
        continue;
      }
      say(`[${i + 1}/${scenarios.length}] ${s.name}: ${s.title}`);
      const ctx = new ScenarioContext(rig, broker, join(work, s.name), o.reportDir, s.name, s.firmwareSettings ?? {}, o.image, o.identified);
      const started = performance.now();
      let error: unknown;
      try {
        await Promise.race([ctx.open(), aborted]);
        // Physical boards are read at open (UUID, version): the report names what they ran.
        for (const b of ctx.boards) boardRead(testbed, b.spec);
        const stepsBefore = () => ctx.steps.length;
        let shown = 0;
        const ticker = setInterval(() => {
          while (shown < stepsBefore() - 1) {
            const st = ctx.steps[shown++]!;
            say(`    ${st.ok ? '✓' : '✗'} ${st.name} (${st.ms} ms)`);
          }
        }, 200);
        try {
          const running = s.run(ctx);
          // Abandoned on an abort: what it awaited fails once its boards are closed.
          running.catch(() => undefined);
          await Promise.race([running, aborted]);
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
        result.error = describeError(error);
      }
      results.push(result);
      say(`    ${result.status === 'passed' ? 'PASSED' : `FAILED at "${result.failedStep}": ${result.error}`} in ${result.ms} ms`);
    }
  } finally {
    await broker?.close().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
  return { rig, startedAt, ms: Math.round(performance.now() - t0), results, testbed, ...(o.signal?.aborted ? { interrupted: true } : {}) };
}
