// labgrid run from its source ($LABGRID_SOURCE, else ../shared/labgrid beside the repository when it
// is there; read-only) on Debian's own Python packages: the coordinator for the tests, the farm bench
// and `fleet farm coordinator`, and labgrid's stock client and exporter for the interoperability
// tests. Nothing of labgrid's is copied here: this only finds the source, checks the packages and
// starts its modules as processes.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FarmError } from './errors.ts';

const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The fallback when $LABGRID_SOURCE is not set: labgrid's source beside the repository, where it is. */
export const SHARED_LABGRID = resolve(REPO_ROOT, '..', 'shared', 'labgrid');
/** What marks a folder as labgrid's source (the module the farm runs its coordinator from). */
const COORDINATOR_MODULE = join('labgrid', 'remote', 'coordinator.py');

export interface LabgridSource {
  root: string;
  from: 'LABGRID_SOURCE' | '../shared/labgrid';
}

/**
 * The one place that finds labgrid's source: $LABGRID_SOURCE when set, else `fallback`
 * (../shared/labgrid) when it exists. Without either it throws, naming the variable to set.
 */
export function locateLabgrid(env: NodeJS.ProcessEnv = process.env, fallback = SHARED_LABGRID): LabgridSource {
  const given = env.LABGRID_SOURCE;
  if (given) {
    const root = resolve(given);
    if (!existsSync(join(root, COORDINATOR_MODULE))) throw new FarmError('unreachable', `LABGRID_SOURCE=${given} is not labgrid's source (no ${COORDINATOR_MODULE} there): point it at a labgrid checkout`);
    return { root, from: 'LABGRID_SOURCE' };
  }
  if (!existsSync(join(fallback, COORDINATOR_MODULE))) {
    throw new FarmError('unreachable', `labgrid's source was not found: set LABGRID_SOURCE to a labgrid checkout (the farm runs labgrid's own coordinator from it), or put one at ${fallback}`);
  }
  return { root: fallback, from: '../shared/labgrid' };
}
/** Debian's Python: another one may come first on PATH (pyenv) without Debian's packages. */
export const PYTHON = '/usr/bin/python3';
/** The stand-in for grpc_reflection, which Debian does not package (python/grpc_reflection/). */
const STAND_INS = fileURLToPath(new URL('./python', import.meta.url));

/** What labgrid's coordinator, client and exporter import, and the Debian package of each (SNAPSHOT.md). */
export const LABGRID_PACKAGES = [
  { module: 'grpc', debian: 'python3-grpcio' },
  { module: 'google.protobuf', debian: 'python3-protobuf' },
  { module: 'attr', debian: 'python3-attr' },
  { module: 'jinja2', debian: 'python3-jinja2' },
  { module: 'yaml', debian: 'python3-yaml' },
  { module: 'pexpect', debian: 'python3-pexpect' },
  { module: 'serial', debian: 'python3-serial' },
  { module: 'xmodem', debian: 'python3-xmodem' },
  { module: 'exceptiongroup', debian: 'python3-exceptiongroup' },
] as const;

/** Why labgrid cannot run here (the source, Python or its packages missing), or undefined when it can. */
export function labgridMissing(env: NodeJS.ProcessEnv = process.env, fallback = SHARED_LABGRID): string | undefined {
  try {
    locateLabgrid(env, fallback);
  } catch (err) {
    if (err instanceof FarmError) return err.message;
    throw err;
  }
  if (!existsSync(PYTHON)) return `${PYTHON} is missing: labgrid runs on Debian's Python 3 and its packages (apt-get install --no-install-recommends python3 ${LABGRID_PACKAGES.map((p) => p.debian).join(' ')})`;
  const probe = LABGRID_PACKAGES.map((p) => `\ntry:\n import ${p.module}\nexcept Exception:\n print(${JSON.stringify(p.debian)})`).join('');
  const r = spawnSync(PYTHON, ['-c', probe], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 60_000 });
  if (r.status !== 0) return `${PYTHON} could not check labgrid's packages: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`;
  const missing = r.stdout.split('\n').filter(Boolean);
  if (missing.length) return `labgrid's coordinator needs Debian's ${missing.join(', ')}, missing for ${PYTHON}: apt-get install --no-install-recommends ${missing.join(' ')}`;
  return undefined;
}

/** The environment labgrid's modules run in: the source and the stand-in on PYTHONPATH. */
export function labgridEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PYTHONPATH: [locateLabgrid().root, STAND_INS].join(delimiter), PYTHONUNBUFFERED: '1', ...extra };
}

/** Starts one of labgrid's modules (labgrid.remote.client, .exporter, .coordinator) with Debian's Python. */
export function spawnLabgrid(module: string, args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  return spawn(PYTHON, ['-m', module, ...args], { cwd: o.cwd ?? tmpdir(), env: labgridEnv(o.env), stdio: ['pipe', 'pipe', 'pipe'] });
}

export interface RunningCoordinator {
  /** host:port, as labgrid's -x and our --farm take it. */
  address: string;
  pid: number;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves, saying how, when the process ends. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export const COORDINATOR_START_MS = 60_000;

/**
 * A coordinator listening on `listen` (host:port), in a fresh folder (it writes places.yaml and
 * resources.yaml where it runs; `dir` keeps them across restarts). Resolves once it says it is ready.
 */
export async function startCoordinator(listen: string, o: { dir?: string; startMs?: number } = {}): Promise<RunningCoordinator> {
  const missing = labgridMissing();
  if (missing) throw new FarmError('unreachable', missing);
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'labgrid-coordinator-'));
  mkdirSync(dir, { recursive: true });
  const child = spawnLabgrid('labgrid.remote.coordinator', ['--listen', listen], { cwd: dir });
  let output = '';
  const exited = new Promise<string>((r) => child.on('exit', (code, signal) => r(`the labgrid coordinator exited (${signal ?? `code ${code}`})`)));
  const ready = new Promise<void>((r) => {
    const read = (c: Buffer) => {
      output += c;
      if (/Coordinator ready/.test(output)) r();
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
  });
  let timer: NodeJS.Timeout | undefined;
  const startMs = o.startMs ?? COORDINATOR_START_MS;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(kill);
    }
    if (!o.dir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([
      ready,
      exited.then((why) => Promise.reject(new FarmError('unreachable', `${why} before it was ready:\n${output.trim()}`))),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new FarmError('unreachable', `the labgrid coordinator did not say it was ready within ${startMs / 1000} s:\n${output.trim()}`)), startMs))),
    ]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { address: listen, pid: child.pid!, output: () => output, exited, stop };
}
