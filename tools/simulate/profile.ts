// Summarises a V8 CPU profile (`node --cpu-prof`): self time by function and by what the time is spent
// on in the upload path (signature check, hashing, store write, HTTP, Express, GC), so that "where the
// time goes" is read from a profile, not guessed (docs/fleet-scale.md).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Sampled time outside idle, ms. */
  busyMs: number;
  totalMs: number;
  categories: { name: string; ms: number; share: number }[];
  functions: { name: string; where: string; ms: number; share: number }[];
}

/**
 * What a frame is spent on; the first rule that matches wins. Frames not matched count as "other JS".
 * A native frame (no script: a crypto job's run, a SQLite statement, a socket write) is judged by the
 * nearest caller that has one, so that `run` under crypto's sign is signing and under better-sqlite3
 * is the store.
 */
const RULES: [string, (fn: string, url: string) => boolean][] = [
  ['idle', (fn) => fn === '(idle)'],
  ['garbage collection', (fn) => fn === '(garbage collector)'],
  ['(program: native, not attributed)', (fn) => fn === '(program)'],
  ['key parsing (createPublicKey)', (fn, url) => /internal\/crypto\/keys/.test(url)],
  ['signature check (ECDSA verify)', (fn, url) => /auth\/device-signature/.test(url) || (/internal\/crypto\/sig/.test(url) && /verify/i.test(fn))],
  ['signing (ECDSA sign: the simulator, the load tool)', (fn, url) => /internal\/crypto\/sig/.test(url) || /device-signer/.test(url)],
  ['cipher (AES-CTR: the simulator\'s blobs)', (_fn, url) => /internal\/crypto\/cipher/.test(url)],
  ['hashing (SHA-256)', (_fn, url) => /internal\/crypto\/hash/.test(url)],
  ['store (SQLite / pg)', (_fn, url) => /better-sqlite3|store\/sqlite|store\/postgres|node_modules\/pg/.test(url)],
  ['body read (chunks, concat)', (fn, url) => /cloud\/http\.ts|cloud\/transport\.ts/.test(url) || fn === 'concat' || /internal\/streams/.test(url)],
  ['Express router and middleware', (_fn, url) => /node_modules\/(express|router|finalhandler|body-parser|send|qs|path-to-regexp)/.test(url)],
  ['node HTTP and sockets', (fn, url) => /node:_http|_http_|node:net|internal\/stream_base|(^|\/)net\.js/.test(url) || fn === 'writev' || fn === 'writeUtf8String' || fn === 'writeBuffer'],
  ['logging', (_fn, url) => /cloud\/logging|node_modules\/pino/.test(url)],
];

function categorize(fn: string, url: string): string {
  for (const [name, test] of RULES) if (test(fn, url)) return name;
  return 'other JS';
}

/**
 * A window of time to summarise, in microseconds of the monotonic clock V8 stamps its samples with
 * (CLOCK_MONOTONIC on Linux, as `process.hrtime.bigint() / 1000n` in any process of the machine).
 */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** The monotonic clock in the unit of a profile's timestamps, now. */
export function profileClockUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Self time by category and by function, over one or several profiles (the processes and threads of
 * one service are summed), only of the samples inside the window(s) when given (a load's measured
 * parts, without start-up).
 */
export function summarizeProfile(paths: string | string[], top = 15, window?: ProfileWindow | ProfileWindow[]): ProfileSummary {
  const windows = window === undefined ? undefined : Array.isArray(window) ? window : [window];
  const categories = new Map<string, number>();
  const functions = new Map<string, { name: string; where: string; us: number }>();
  let total = 0;
  for (const path of typeof paths === 'string' ? [paths] : paths) {
    const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    /** A frame's script, or its nearest caller's for a native frame. */
    const scriptOf = (id: number): string => {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const url = byId.get(at)?.callFrame.url;
        if (url) return url;
      }
      return '';
    };
    const selfUs = new Map<number, number>();
    let at = p.startTime;
    for (let i = 0; i < p.samples.length; i++) {
      at += p.timeDeltas[i] ?? 0;
      if (windows && !windows.some((w) => at >= w.fromUs && at <= w.toUs)) continue;
      const id = p.samples[i]!;
      selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0));
    }
    for (const [id, us] of selfUs) {
      const n = byId.get(id)!;
      const { functionName, url, lineNumber } = n.callFrame;
      const cat = categorize(functionName, functionName.startsWith('(') ? url : scriptOf(id));
      categories.set(cat, (categories.get(cat) ?? 0) + us);
      total += us;
      const where = url ? `${url.replace(/^file:\/\/.*?\/(node_modules|cloud|tools)\//, '$1/')}:${lineNumber + 1}` : '';
      const key = `${functionName}@${where}`;
      const f = functions.get(key) ?? { name: functionName || '(anonymous)', where, us: 0 };
      f.us += us;
      functions.set(key, f);
    }
  }
  const idle = categories.get('idle') ?? 0;
  const busy = total - idle;
  return {
    busyMs: busy / 1000,
    totalMs: total / 1000,
    categories: [...categories]
      .filter(([name]) => name !== 'idle')
      .map(([name, us]) => ({ name, ms: us / 1000, share: busy > 0 ? us / busy : 0 }))
      .sort((a, b) => b.ms - a.ms),
    functions: [...functions.values()]
      .filter((f) => f.name !== '(idle)')
      .map((f) => ({ name: f.name, where: f.where, ms: f.us / 1000, share: busy > 0 ? f.us / busy : 0 }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top),
  };
}

export function formatProfile(s: ProfileSummary): string[] {
  return [
    `profile: busy ${s.busyMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms sampled`,
    ...s.categories.map((c) => `  ${(c.share * 100).toFixed(1).padStart(5)} %  ${c.name}`),
    '  top functions by self time:',
    ...s.functions.map((f) => `  ${(f.share * 100).toFixed(1).padStart(5)} %  ${f.name}  ${f.where}`),
  ];
}
