// A board farm for a test: labgrid's coordinator from the shared source on a free loopback port, and
// `fleet farm export` of the two-board farm rig as a real process, as a rig host runs it. Without
// labgrid's Python packages `farmOrFail` throws the reason, so that the farm tests fail saying what is
// missing (a farm test that passes without a coordinator would test nothing). Waits poll the
// coordinator with deadlines: the tests run beside other work on two CPUs.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { ClientSession, CoordinatorChannel } from '../../harness/farm/client.ts';
import { labgridMissing, startCoordinator, type RunningCoordinator } from '../../harness/farm/coordinator.ts';
import type { Place } from '../../harness/farm/labgrid/messages.ts';
import { freeLoopbackPort } from '../../harness/ports.ts';
import { FLEET_JS, ROOT, toolEnv } from './fleet-cli.ts';

export const FARM_RIG = fileURLToPath(new URL('../../harness/rigs/farm-two-board.json', import.meta.url));
/** Two virtual boards started and health-checked, under load. */
export const EXPORT_START_MS = 180_000;

/** Throws why labgrid cannot run here. */
export function farmOrFail(): void {
  const missing = labgridMissing();
  if (missing) throw new Error(`the farm tests need labgrid's coordinator: ${missing}`);
}

export interface Farm {
  coordinator: RunningCoordinator;
  exporter: RunningProcess;
}

/**
 * A coordinator and `fleet farm export` of `rig` as `name` for the test file. Should either not start
 * (labgrid's packages missing), every test of the file fails with the reason, rather than being
 * skipped as a failing beforeAll leaves them.
 */
export function useFarm(name: string, rig = FARM_RIG): Farm {
  const farm = {} as Farm;
  let failure: unknown;
  beforeAll(async () => {
    try {
      farm.coordinator = await startTestCoordinator();
      farm.exporter = await startExport(farm.coordinator.address, name, rig);
    } catch (err) {
      failure = err;
    }
  }, EXPORT_START_MS + 60_000);
  beforeEach(() => {
    if (failure) throw failure;
  });
  afterAll(async () => {
    await farm.exporter?.stop();
    await farm.coordinator?.stop();
  });
  return farm;
}

export async function until<T>(what: string, test: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await test();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function startTestCoordinator(): Promise<RunningCoordinator> {
  farmOrFail();
  return startCoordinator(`127.0.0.1:${await freeLoopbackPort()}`);
}

export interface RunningProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL if it has not ended within `graceMs`. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `fleet …` as a process that runs on until stopped. */
export function spawnFleet(args: string[], env: Record<string, string> = {}): RunningProcess {
  const child = spawn(process.execPath, [FLEET_JS, ...args], { cwd: ROOT, env: { ...toolEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('close', (code, signal) => r({ code, signal })));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const r = await exited;
        clearTimeout(t);
        return r;
      }
      return exited;
    },
  };
}

/** `fleet farm export` of a rig under `name`; resolves once its places are published. */
export async function startExport(coordinator: string, name: string, rig = FARM_RIG): Promise<RunningProcess> {
  const p = spawnFleet(['farm', 'export', rig, '--coordinator', coordinator, '--name', name]);
  try {
    await until(`fleet farm export publishes ${name}'s boards`, () => {
      if (p.child.exitCode !== null) throw new Error(`fleet farm export exited (code ${p.child.exitCode}):\n${p.stderr()}`);
      return /published to/.test(p.stderr());
    }, EXPORT_START_MS);
  } catch (err) {
    await p.stop();
    throw err;
  }
  return p;
}

/** The places as the coordinator lists them now, by name. */
export async function placesNow(coordinator: string): Promise<Map<string, Place>> {
  const c = await CoordinatorChannel.open(coordinator);
  try {
    return new Map((await c.places()).map((p) => [p.name!, p]));
  } finally {
    c.close();
  }
}

/** The resources the coordinator lists now (exporter/group/class/name). */
export async function resourcesNow(coordinator: string): Promise<string[]> {
  const s = await ClientSession.start(coordinator, 'test/farm-watcher');
  try {
    return [...s.resources.keys()];
  } finally {
    s.close();
  }
}

/** Free: nobody holds it, no reservation, no lease. */
export function isFree(p: Place | undefined): boolean {
  return !!p && !p.acquired && !p.reservation && !p.tags?.lease;
}
