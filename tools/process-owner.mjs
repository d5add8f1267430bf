// Whether the process that started something is still there (tools/postgres-server.ts and its
// watchdog, tools/postgres-watchdog.mjs, which runs as plain JavaScript in a session of its own).
import { existsSync, readFileSync } from 'node:fs';

/**
 * The start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone.
 * A zombie is gone: it has exited, and only waits for its parent to read its status (an owner killed
 * while its parent is busy stays one for a while; it will never stop its server).
 * @param {number} pid
 * @returns {string | undefined}
 */
export function processStart(pid) {
  try {
    // pid (comm) state …: comm may hold spaces and parentheses, so the fields after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
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
