// Stopping a helper process the harness started (socat, mosquitto): SIGTERM, and SIGKILL if it is
// still there after the grace period, so that nothing is left holding a pty or a port. Returns as
// soon as it is gone; no timer outlives it (a pending one kept a stopping `fleet virtual` alive).
import type { ChildProcess } from 'node:child_process';

export async function stopChild(child: ChildProcess, graceMs = 2000): Promise<void> {
  // Gone already: exited, or killed by a signal (a terminal's Ctrl-C reaches the whole group).
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
  clearTimeout(timer);
  if (killed) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Helper processes still running (socat), for a process that must exit at once (killHelperProcesses). */
const live = new Set<ChildProcess>();

/** Records a helper process until it exits. */
export function trackChild<C extends ChildProcess>(child: C): C {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/**
 * SIGKILL to every tracked helper still running: what a forced exit does (`fleet virtual` stopping
 * past its grace), since Node does not end its children when it exits and socat would keep its ptys.
 */
export function killHelperProcesses(): void {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  live.clear();
}
