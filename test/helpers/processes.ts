// The processes a command started (socat, xsnap workers, mosquitto), read from /proc, so that a test
// can check they are all gone after it stopped. Linux only, as the harness's pseudo-terminals are.
import { readdirSync, readFileSync } from 'node:fs';

interface Stat {
  pid: number;
  ppid: number;
  state: string;
}

function stat(pid: number): Stat | undefined {
  try {
    // pid (comm) state ppid …; comm may hold spaces and parentheses: split after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(ppid), state: state! };
  } catch {
    return undefined;
  }
}

/** Every living descendant of `pid`, with its command line. */
export function descendants(pid: number): { pid: number; command: string }[] {
  const all = readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => stat(Number(n)))
    .filter((s): s is Stat => s !== undefined && s.state !== 'Z');
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const s of all) if (s.ppid === parent) (found.push(s.pid), walk(s.pid));
  };
  walk(pid);
  return found.map((p) => ({ pid: p, command: command(p) }));
}

function command(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Those of `pids` that still run (a zombie waiting for its reaper has ended). */
export function stillRunning(pids: { pid: number; command: string }[]): { pid: number; command: string }[] {
  return pids.filter((p) => {
    const s = stat(p.pid);
    return s !== undefined && s.state !== 'Z' && command(p.pid) === p.command;
  });
}
