// The `fleet` command run as a user runs it: a real process (bin/fleet.js), its exit code and
// output, optionally with standard input, an environment of its own, and a time limit.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const FLEET_JS = fileURLToPath(new URL('../../bin/fleet.js', import.meta.url));
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What a user's shell gives every command besides the test's own variables: PATH, HOME, and where the
 * Moddable SDK and labgrid's source are (the README's set-up has the reader export MODDABLE and
 * LABGRID_SOURCE; CI's copy has no ../shared beside it to fall back on).
 */
export function toolEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...(process.env.MODDABLE ? { MODDABLE: process.env.MODDABLE } : {}),
    ...(process.env.LABGRID_SOURCE ? { LABGRID_SOURCE: process.env.LABGRID_SOURCE } : {}),
  };
}

export interface FleetRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `env` replaces the environment but for toolEnv(); `input` is written to standard input, then closed. */
export function runFleet(args: string[], o: { env?: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<FleetRun> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [FLEET_JS, ...args], {
      env: { ...toolEnv(), ...o.env },
      cwd: o.cwd ?? ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    child.stdin.on('error', () => undefined);
    child.stdin.end(o.input ?? '');
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}
