// What a service made of several processes costs, read from Linux's /proc (docs/fleet-scale.md): a
// `fleet serve` is a supervisor and its workers, a baseline server too. CPU over all threads of every
// process of the tree, resident memory summed, and how busy the whole machine was (others' work
// included). Elsewhere than Linux every figure is 0.
import { readFileSync } from 'node:fs';

/** `pid` and its descendants. */
export function treePids(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const p = out[i]!;
      out.push(...readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** CPU seconds one process has used so far, all its threads (utime + stime). */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of a process tree so far. Children that exited are counted by their parent once
 * reaped (cutime, cstime), so a worker restarted during a measurement is not lost.
 */
export function treeCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  let sum = 0;
  for (const p of treePids(pid)) {
    sum += processCpuSeconds(p);
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      sum += (Number(fields[13]) + Number(fields[14])) / 100;
    } catch {
      /* gone */
    }
  }
  return sum;
}

/** Resident memory of a process tree now, bytes. */
export function treeRssBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  let sum = 0;
  for (const p of treePids(pid)) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) sum += Number(m[1]) * 1024;
    } catch {
      /* gone */
    }
  }
  return sum;
}

/** The highest resident memory of a tree, sampled every `everyMs` until stopped. */
export function rssPeak(pid: number | undefined, everyMs = 250): { stop(): number } {
  let peak = treeRssBytes(pid);
  const timer = setInterval(() => (peak = Math.max(peak, treeRssBytes(pid))), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, treeRssBytes(pid));
    },
  };
}

/** The machine's CPU time so far, busy and total, over all cores (/proc/stat), in clock ticks. */
export function machineCpu(): { busy: number; total: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - f[3]! - (f[4] ?? 0), total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** The share of the machine that was busy between two readings of machineCpu(). */
export function busyShare(from: { busy: number; total: number }, to: { busy: number; total: number }): number {
  return to.total > from.total ? (to.busy - from.busy) / (to.total - from.total) : 0;
}
