// `fleet virtual` as a user runs it, in another process: the boards are reached only through what it
// prints, one line per board (console pty, RFC 2217 URL, Ethernet address).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { FLEET_JS, ROOT } from './fleet-cli.ts';

export const TWO_BOARD_RIG = join(ROOT, 'harness', 'rigs', 'two-board.json');

export interface VirtualBoardLine {
  console: string;
  rfc2217: string;
  ethernet?: string;
}

export interface RunningVirtual {
  child: ChildProcessWithoutNullStreams;
  readonly stdout: string;
  readonly stderr: string;
  /** The last line printed for a board that matches `pattern` (default: any), waited for. */
  line(pattern?: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  board(id: string, timeoutMs?: number): Promise<VirtualBoardLine>;
  /** Sends a signal and waits for the exit: its code (null when killed) and how long it took. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

export function startVirtual(args: string[] = [TWO_BOARD_RIG, 'source']): RunningVirtual {
  const child = spawn(process.execPath, [FLEET_JS, 'virtual', ...args], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const running: RunningVirtual = {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    async line(pattern = /^board /, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = stdout.split('\n').reverse().map((l) => pattern.exec(l)).find(Boolean);
        if (m) return m;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`fleet virtual never printed ${pattern}: ${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async board(id, timeoutMs) {
      const m = await running.line(new RegExp(`^board ${id} console=(\\S+) rfc2217=(rfc2217://127\\.0\\.0\\.1:\\d+)(?: ethernet=(http://\\S+))?`), timeoutMs);
      return { console: m[1]!, rfc2217: m[2]!, ...(m[3] ? { ethernet: m[3] } : {}) };
    },
    async stop(signal = 'SIGINT', timeoutMs = 30_000) {
      const t0 = Date.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const r = await exited;
      clearTimeout(timer);
      return { ...r, ms: Date.now() - t0 };
    },
  };
  return running;
}

/** One `fleet virtual` board for a whole test file: started before its tests, stopped (SIGINT) after them. */
export function virtualBoardPerFile(args?: string[], id = 'source'): { readonly virtual: RunningVirtual; readonly board: VirtualBoardLine } {
  const held = {} as { virtual: RunningVirtual; board: VirtualBoardLine };
  beforeAll(async () => {
    held.virtual = startVirtual(args);
    held.board = await held.virtual.board(id);
  }, 120_000);
  afterAll(async () => {
    await held.virtual?.stop('SIGINT');
  });
  return held;
}
