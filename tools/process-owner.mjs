// Whether the process that started something is still there (tools/postgres-server.ts and its
// watchdog, tools/postgres-watchdog.mjs, which runs as plain JavaScript in a session of its own).
import { existsSync, readFileSync } from 'node:fs';

/**
 * The start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone.
 * @param {number} pid
 * @returns {string | undefined}
 */
export function processStart(pid) {
  try {
    // pid (comm) state …: comm may hold spaces and parentheses, so the fields after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * The owner still runs: the same pid with the same start time (a pid given to another process since is not the owner).
 * @param {{ pid: number, start: string | undefined }} owner
 * @returns {boolean}
 */
export function ownerAlive(owner) {
  if (existsSync('/proc/self/stat')) {
    const start = processStart(owner.pid);
    return start !== undefined && (owner.start === undefined || start === owner.start);
  }
  try {
    process.kill(owner.pid, 0); // no /proc (not Linux): signal 0 says whether it lives
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}
