// The `fleet` command as an operator runs it against the bench's cloud: a real process (bin/fleet.js),
// its exit code and output. Scenarios read what the operator reads (`fleet device health`, `fleet
// rollout show`, `fleet audit`), not only what the admin API answers.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const FLEET_JS = fileURLToPath(new URL('../bin/fleet.js', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface FleetRun {
  args: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `fleet <args>` with the cloud's URL and a super-user token in its environment (FLEET_CLOUD_URL, FLEET_TOKEN). */
export function runFleet(args: string[], cloud: { url: string; token: string }, timeoutMs = 60_000): Promise<FleetRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLEET_JS, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FLEET_CLOUD_URL: cloud.url, FLEET_TOKEN: cloud.token },
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => (clearTimeout(timer), reject(err)));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ args, code, stdout, stderr });
    });
  });
}
